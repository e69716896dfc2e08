/**
 * The event outbox. A state change records its event with `recordEvent` inside the same transaction, so
 * an event exists exactly when its change committed. Only the types of the catalogue (`event-catalogue.ts`)
 * can be recorded, each with its payload's shape. Consumers (webhook dispatcher, live stream) read the
 * table in `id` order; `EventNotifier` wakes them right after a commit instead of waiting for their poll.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Clock } from './clock.ts';
import type { EventPayload, EventType } from './event-catalogue.ts';
import type { EventRecord } from '../model.ts';
import { insertEvent } from '../store/events-store.ts';
import type { Executor } from '../store/database.ts';

export type { EventRecord };

/** An event to record; `T` is one type of the catalogue, or a union of types that share `data`'s shape. */
export interface NewEvent<T extends EventType> {
  /** Dotted name, family first: `session.created`, `vm.expired`, `api_key.deleted`… */
  type: T;
  /** The user the event belongs to (who may receive it); null for system events. */
  userId: number | null;
  /** The id of the thing the event is about (session, VM, key…). */
  subjectId?: string | null;
  data: EventPayload<T>;
}

/** `evt_` + 48-bit millisecond time + 80 random bits, base32-ish hex: unique, and sortable by time. */
export function newEventId(now: Date): string {
  return `evt_${now.getTime().toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`;
}

/** The family of an event type: the part before the first dot (`vm.started` → `vm`). */
export function eventGroup(type: string): string {
  return type.split('.')[0] ?? type;
}

/** Records an event in the caller's transaction (or directly, for changes that are a single write). */
export async function recordEvent<T extends EventType>(db: Executor, clock: Clock, event: NewEvent<T>): Promise<EventRecord> {
  const now = clock.now();
  return insertEvent(db, {
    id: newEventId(now),
    userId: event.userId,
    type: event.type,
    group: eventGroup(event.type),
    subjectId: event.subjectId ?? null,
    data: event.data as Record<string, unknown>,
    createdAt: now.toISOString(),
  });
}

/** In-process wake-up signal for outbox consumers; call `committed()` after a transaction that recorded events. */
export class EventNotifier extends EventEmitter {
  committed(): void {
    this.emit('committed');
  }
}
