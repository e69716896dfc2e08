/**
 * A process's output written to an HTTP answer as it happens, in the format the request's Accept asks for:
 * Server-Sent Events (`text/event-stream`: `id:` is the event number, so a reconnecting EventSource resumes with
 * Last-Event-ID) or NDJSON (`application/x-ndjson`: one JSON event per line, for plain HTTP clients). Output bytes
 * are decoded as UTF-8 per stream (a character cut between two reads stays whole) or written as base64.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { OutputItem } from '../../../core/process-output.ts';
import type { ProcessView } from '../../../core/processes.ts';

export type StreamFormat = 'sse' | 'ndjson';
const KEEP_ALIVE_MS = 15_000;

/** The streamed format the Accept header asks for, or null for a plain JSON answer. */
export function streamFormatOf(accept: string | undefined): StreamFormat | null {
  if (!accept) return null;
  if (/text\/event-stream/i.test(accept)) return 'sse';
  if (/application\/(x-)?ndjson|application\/jsonl/i.test(accept)) return 'ndjson';
  return null;
}

/** Turns output items into wire events, decoding bytes per stream. */
export class EventEncoder {
  private readonly decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };

  constructor(private readonly encoding: 'utf8' | 'base64') {}

  encode(item: OutputItem): Record<string, unknown> | null {
    if (item.kind === 'dropped') return { type: 'dropped', events: item.events };
    if (item.kind === 'end') return null;
    const { seq, stream, data } = item.event;
    return { type: stream, seq, data: this.encoding === 'base64' ? data.toString('base64') : this.decoders[stream].write(data) };
  }
}

/** Writes events to a hijacked answer; ends when the reader goes (the process keeps running). */
export class EventWriter {
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    private readonly res: ServerResponse,
    private readonly format: StreamFormat,
    requestId: string,
    /** Aborts when the reader went away. */
    private readonly signal: AbortSignal,
  ) {
    res.writeHead(200, {
      'content-type': format === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': requestId,
    });
    // NDJSON has no comment: its keep-alive is an empty line, which readers skip.
    this.keepAlive = setInterval(() => res.write(format === 'sse' ? ': keep-alive\n\n' : '\n'), KEEP_ALIVE_MS);
  }

  async write(event: Record<string, unknown>): Promise<void> {
    const json = JSON.stringify(event);
    const text =
      this.format === 'ndjson' ? `${json}\n` : `${typeof event.seq === 'number' ? `id: ${event.seq}\n` : ''}event: ${String(event.type)}\ndata: ${json}\n\n`;
    if (!this.res.write(text) && !this.res.destroyed) await once(this.res, 'drain', { signal: this.signal });
  }

  end(): void {
    clearInterval(this.keepAlive);
    this.res.end();
  }
}

/** The `exit` event of an ended process. */
export function exitEvent(process: ProcessView): Record<string, unknown> {
  return { type: 'exit', process };
}
