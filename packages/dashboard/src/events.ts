/**
 * Live updates: one EventSource on GET /v1/events/stream (the session cookie authenticates it; EventSource
 * reconnects by itself and sends Last-Event-ID). Pages subscribe to the event types they show.
 */
import { useEffect, useRef } from 'react';

type Listener = (type: string, data: unknown) => void;
const listeners = new Set<Listener>();
let source: EventSource | null = null;

/** The event families the console reacts to (docs/events.md). */
const TYPES = [
  'session.created',
  'vm.started',
  'vm.failed',
  'vm.killed',
  'vm.expired',
  'vm.crashed',
  'vm.agent_lost',
  'vm.lost',
  'vm.paused',
  'vm.resumed',
  'vm.cloned',
  'vm.snapshotted',
  'execution.completed',
  'execution.failed',
];

function open(): void {
  if (source) return;
  source = new EventSource('/v1/events/stream');
  for (const type of TYPES) {
    source.addEventListener(type, (event) => {
      let data: unknown = null;
      try {
        data = JSON.parse((event as MessageEvent<string>).data);
      } catch {
        data = null;
      }
      for (const listener of listeners) listener(type, data);
    });
  }
}

/** Closes the stream (sign-out). */
export function closeEventStream(): void {
  source?.close();
  source = null;
}

/** Calls `onEvent` for every live event whose type starts with one of `prefixes`. */
export function useLiveEvents(prefixes: string[], onEvent: (type: string, data: unknown) => void): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const key = prefixes.join(',');
  useEffect(() => {
    open();
    const wanted = key.split(',');
    const listener: Listener = (type, data) => {
      if (wanted.some((prefix) => type.startsWith(prefix))) handler.current(type, data);
    };
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, [key]);
}
