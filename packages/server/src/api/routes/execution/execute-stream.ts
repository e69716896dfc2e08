/**
 * `POST /execute` with `Accept: application/x-ndjson` or `text/event-stream`: the run as it happens. Events, in
 * order: `start` (`execution_id`, `session_id`) once the run has its VM; `stdout` and `stderr` (`data`, UTF-8 text)
 * as the code writes, Python's included; then one of `end` (`execution`: the same ExecuteResponse a plain execute
 * answers; `error`: why it did not complete, as its record says, or null), `timeout` (the wait ran out: the run goes on, as a 408 says) or `error` (`code`, `detail`). Refusals
 * (401, 404, 422, 429, 503) come before the stream starts, as ordinary answers. Closing the stream leaves the run
 * going; its record completes as for any execute.
 */
import { StringDecoder } from 'node:string_decoder';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../core/errors.ts';
import type { ExecuteRequest, ExecutionService } from '../../../core/executions.ts';
import type { Principal } from '../../../core/authenticator.ts';
import { EventWriter, type StreamFormat } from '../processes/output-stream.ts';
import { toExecuteResponse } from './schemas.ts';

/** Output held for a reader slower than the run; past this much, output events are skipped (the record keeps it). */
const MAX_QUEUED_CHARS = 8 * 1024 * 1024;

type Event = Record<string, unknown>;

/** The events a run makes, in order, read by the writer as they come; it ends once closed and read. */
class EventQueue {
  private events: Event[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  /** What waits unread, in characters of output. */
  queuedChars = 0;

  push(event: Event): void {
    if (this.closed) return;
    this.events.push(event);
    this.wake?.();
  }

  /** Nothing more is taken; what is queued is still read. */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *drain(): AsyncGenerator<Event> {
    for (;;) {
      const batch = this.events;
      this.events = [];
      this.queuedChars = 0;
      yield* batch;
      if (this.events.length > 0) continue;
      if (this.closed) return;
      await new Promise<void>((resolve) => {
        this.wake = () => {
          this.wake = undefined;
          resolve();
        };
      });
    }
  }
}

/** Runs `request` and streams it to the hijacked answer; `streams` holds its controller while it runs. */
export async function streamExecution(
  executions: ExecutionService,
  principal: Principal,
  run: ExecuteRequest,
  http: { request: FastifyRequest; reply: FastifyReply; format: StreamFormat; streams: Set<AbortController> },
): Promise<void> {
  const queue = new EventQueue();
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  let skipped = 0;
  const onOutput = (stream: 'stdout' | 'stderr', chunk: Buffer): void => {
    const data = decoders[stream].write(chunk);
    if (data === '') return;
    if (queue.queuedChars > MAX_QUEUED_CHARS) {
      skipped += data.length;
      return;
    }
    queue.queuedChars += data.length;
    queue.push({ type: stream, data });
  };
  // Refusals are thrown from here, before the answer is a stream: they are ordinary 4xx/5xx answers.
  const { record, finished } = await executions.executeStreamed(principal, { ...run, onOutput });
  const { request, reply, format, streams } = http;
  reply.hijack();
  const controller = new AbortController();
  streams.add(controller);
  reply.raw.on('close', () => controller.abort());
  const writer = new EventWriter(reply.raw, format, request.id, controller.signal);
  let timer: NodeJS.Timeout | undefined;
  const waited = Promise.race([
    finished.then(
      // `error`: why a run did not complete (cancelled, killed at its deadline, its VM gone), as its record says.
      (execution): Event => ({ type: 'end', execution: toExecuteResponse(execution), error: execution.error }),
      (error: unknown): Event =>
        error instanceof AppError
          ? { ...error.fields, type: 'error', status: error.statusCode, code: error.code, detail: error.message }
          : { type: 'error', status: 500, code: 'INTERNAL', detail: 'the run failed on the server' },
    ),
    new Promise<Event>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            type: 'timeout',
            execution_id: record.id,
            session_id: record.sessionId,
            detail: `the execution is still running after ${run.timeoutSeconds} s; it goes on: poll GET /v1/executions/${record.id}`,
          }),
        run.timeoutSeconds * 1000,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  try {
    await writer.write({ type: 'start', execution_id: record.id, session_id: record.sessionId });
    void waited.then((last) => {
      // The run's last bytes (a character cut in two at the end) and what a slow reader missed, then its end.
      for (const stream of ['stdout', 'stderr'] as const) {
        const rest = decoders[stream].end();
        if (rest) queue.push({ type: stream, data: rest });
      }
      if (skipped > 0) queue.push({ type: 'dropped', characters: skipped });
      queue.push(last);
      queue.close();
    });
    // A reader that went away ends the loop now, not when the run ends (the run goes on).
    controller.signal.addEventListener('abort', () => queue.close(), { once: true });
    for await (const event of queue.drain()) {
      if (controller.signal.aborted) break;
      await writer.write(event);
    }
  } catch (error) {
    if (!controller.signal.aborted) request.log.error({ err: error }, 'execution stream failed');
  } finally {
    streams.delete(controller);
    writer.end();
  }
}
