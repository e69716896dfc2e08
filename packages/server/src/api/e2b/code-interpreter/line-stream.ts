/**
 * The answer of `POST /execute`: NDJSON, one output line per line, written as the run goes. The SDK parses every
 * line it reads as JSON, so no line may be empty (sandboxd's own streams keep alive with empty lines): this one keeps
 * a long silent run's connection alive with `{"type":"keepalive"}`, a type the SDK skips. Lines made before the
 * answer is opened (a run writes as soon as it starts) wait for it.
 */
import type { ServerResponse } from 'node:http';
import type { OutputLine } from './result-lines.ts';

const KEEP_ALIVE_MS = 15_000;
/** Output a slow reader may leave unread before more is skipped (the execution's record keeps all of it). */
const MAX_UNREAD_BYTES = 8 * 1024 * 1024;

export class LineStream {
  private res: ServerResponse | null = null;
  private pending: string[] = [];
  private keepAlive: NodeJS.Timeout | undefined;
  /** Output lines skipped because the reader fell behind. */
  skipped = 0;

  /** Starts the answer and writes what waited. */
  open(res: ServerResponse, requestId: string): void {
    res.writeHead(200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      'x-request-id': requestId,
    });
    // Now, not with the first line: the SDK's fetch resolves on the headers, and only then starts its `timeoutMs`
    // (before them its `requestTimeoutMs`, 30 s, runs: a silent run would hit it).
    res.flushHeaders();
    this.res = res;
    for (const text of this.pending) res.write(text);
    this.pending = [];
    this.keepAlive = setInterval(() => this.send({ type: 'keepalive' }), KEEP_ALIVE_MS);
  }

  /** Writes a line; output (`droppable`) is skipped while the reader has more than a bound left unread. */
  send(line: OutputLine, droppable = false): void {
    const text = `${JSON.stringify(line)}\n`;
    if (!this.res) {
      this.pending.push(text);
      return;
    }
    if (this.res.destroyed || this.res.writableEnded) return;
    if (droppable && this.res.writableLength > MAX_UNREAD_BYTES) {
      this.skipped += 1;
      return;
    }
    this.res.write(text);
  }

  end(): void {
    clearInterval(this.keepAlive);
    if (this.res && !this.res.writableEnded) this.res.end();
  }
}
