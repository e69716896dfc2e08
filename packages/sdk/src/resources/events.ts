/** GET /v1/events/stream: your events live, as Server-Sent Events, read with fetch (no EventSource needed). */
import type { Transport } from '../transport.ts';
import { withCamelCase } from '../camel-case.ts';

export interface StreamedEvent {
  /** The outbox id: pass the last one seen as `lastEventId` to resume. */
  id: string;
  /** The event type, e.g. `vm.started`. */
  event: string;
  /** The parsed `data:` (the event's JSON), or the raw text when it is not JSON. */
  data: unknown;
}

export class Events {
  constructor(private readonly transport: Transport) {}

  /** Yields events until `signal` aborts or the server ends the stream. */
  async *stream(options: { lastEventId?: string | number; all?: boolean; signal?: AbortSignal } = {}): AsyncGenerator<StreamedEvent> {
    const response = (await this.transport.request(
      'GET',
      '/v1/events/stream',
      {
        query: { all: options.all },
        headers: { accept: 'text/event-stream', ...(options.lastEventId !== undefined ? { 'last-event-id': String(options.lastEventId) } : {}) },
        ...(options.signal ? { signal: options.signal } : {}),
      },
      'stream',
    )) as Response;
    if (!response.body) return;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let current: { id: string; event: string; data: string[] } = { id: '', event: 'message', data: [] };
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffer.search(/\r?\n/)) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
          if (line === '') {
            if (current.data.length > 0) {
              const text = current.data.join('\n');
              let data: unknown = text;
              try {
                data = withCamelCase(JSON.parse(text) as unknown);
              } catch {
                // not JSON: keep the text
              }
              yield { id: current.id, event: current.event, data };
            }
            current = { id: current.id, event: 'message', data: [] };
            continue;
          }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') current.id = value;
          else if (field === 'event') current.event = value;
          else if (field === 'data') current.data.push(value);
        }
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  }
}
