/** GET /v1/events/stream: your events live, as Server-Sent Events, read with fetch (no EventSource needed). */
import { withCamelCase } from '../camel-case.ts';
import { NetworkError } from '../errors.ts';
import { sseMessages } from '../sse.ts';
import { backoffDelayMs, sleep, type Transport } from '../transport.ts';

export interface StreamedEvent {
  /** The outbox id: pass the last one seen as `lastEventId` to resume. */
  id: string;
  /** The event type, e.g. `vm.started`. */
  event: string;
  /** The parsed `data:` (the event's JSON), or the raw text when it is not JSON. */
  data: unknown;
}

export interface EventStreamOptions {
  /** Start after this event id (what a previous stream's last event had); default: with the next event. */
  lastEventId?: string | number;
  /** Administrators: every user's events. */
  all?: boolean;
  /**
   * Open the stream again when it breaks or the server ends it (a restart, a load balancer's idle cut), from the
   * last event seen (`Last-Event-ID`), so nothing is lost or repeated (default true). False: the loop ends with
   * the stream.
   */
  reconnect?: boolean;
  signal?: AbortSignal;
}

/** How many times in a row the stream is opened again without an event in between before it gives up. */
export const MAX_EVENT_STREAM_RECONNECTS = 5;
/** The wait before a reconnect when the server named none (`retry:`), milliseconds (doubling, jittered). */
const RECONNECT_DELAY_MS = 1_000;

export class Events {
  constructor(private readonly transport: Transport) {}

  /**
   * Yields events until `signal` aborts (or, with `reconnect: false`, until the stream ends). A stream that breaks,
   * or that the server ends, is opened again with `Last-Event-ID` set to the last event's id, after the server's
   * `retry:` wait (jittered; doubling when it fails again): up to {@link MAX_EVENT_STREAM_RECONNECTS} times in a row
   * without an event, then the last break is thrown as a NetworkError. Errors of the first answer (401, 403…) are
   * thrown at once.
   */
  async *stream(options: EventStreamOptions = {}): AsyncGenerator<StreamedEvent> {
    const { signal } = options;
    let lastEventId = options.lastEventId;
    let retryMs = RECONNECT_DELAY_MS;
    /** Reconnects since the last event that arrived. */
    let breaks = 0;
    for (;;) {
      let lastBreak: unknown = new Error('the server ended the stream');
      let response: Response | undefined;
      try {
        response = (await this.transport.request(
          'GET',
          '/v1/events/stream',
          {
            query: { all: options.all },
            headers: { accept: 'text/event-stream', ...(lastEventId !== undefined ? { 'last-event-id': String(lastEventId) } : {}) },
            timeout: 2 ** 31 - 1,
            ...(signal ? { signal } : {}),
          },
          'stream',
        )) as Response;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        // The first answer's errors are the caller's; a reconnect that cannot connect counts as one more break.
        if (breaks === 0 || !(error instanceof NetworkError)) throw error;
        lastBreak = error;
      }
      if (response) {
        const messages = sseMessages(response);
        try {
          for (;;) {
            let next: IteratorResult<Awaited<ReturnType<typeof messages.next>>['value']>;
            try {
              next = await messages.next();
            } catch (error) {
              if (signal?.aborted) throw signal.reason;
              lastBreak = error;
              break;
            }
            if (next.done) break;
            const message = next.value;
            if (message.retryMs !== undefined) retryMs = message.retryMs;
            if (message.data === '' && message.retryMs !== undefined) continue;
            if (message.id !== '') lastEventId = message.id;
            breaks = 0;
            yield { id: message.id, event: message.event, data: parsed(message.data) };
          }
        } finally {
          await messages.return(undefined);
        }
      }
      if (signal?.aborted) throw signal.reason;
      if (options.reconnect === false) return;
      breaks++;
      if (breaks > MAX_EVENT_STREAM_RECONNECTS) {
        const why = lastBreak instanceof Error ? lastBreak.message : String(lastBreak);
        throw new NetworkError(`GET /v1/events/stream: the stream broke off ${breaks} times in a row (${why})`, {
          operation: 'GET /v1/events/stream',
          cause: lastBreak,
        });
      }
      await sleep(backoffDelayMs(retryMs, breaks - 1), signal);
    }
  }
}

/** The event's JSON (with its camelCase reading), or the text when it is not JSON. */
function parsed(text: string): unknown {
  try {
    return withCamelCase(JSON.parse(text) as unknown);
  } catch {
    return text;
  }
}
