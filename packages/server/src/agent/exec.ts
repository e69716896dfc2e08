/**
 * `exec`: run a process in the guest, stream its output as events, feed its stdin, get how it ended.
 */
import type { ClientHttp2Stream } from 'node:http2';
import {
  decodeJsonPayload,
  encodeFrame,
  encodeJsonFrame,
  FrameDecoder,
  FrameType,
  ROUTES,
  type AgentErrorBody,
  type ExecAttachRequest,
  type ExecRequest,
  type ExecResult,
  type ExecStarted,
} from '@sandboxd/agent/protocol';
import { DEFAULT_TIMEOUTS_MS, type AgentSession } from './agent-session.ts';
import type { Deadline } from './deadline.ts';
import { AgentError, AgentProtocolError, errorFromAgentAnswer } from './errors.ts';
import { EventQueue } from './event-queue.ts';

/** What to run. Exactly one of `argv` and `command`. */
export interface ExecOptions extends Omit<ExecRequest, 'stdin' | 'timeoutMs'> {
  /** Guest deadline; the process group is killed when it passes. Default 60 s. */
  timeoutMs?: number;
  /** Keep stdin open for {@link ExecHandle.writeStdin}; otherwise the process reads /dev/null. */
  stdin?: boolean;
  /** Cancels the execution (the process group is killed). */
  signal?: AbortSignal;
  /** Unread output the handle buffers before it holds the process back. Default 8 MiB. */
  outputHighWaterBytes?: number;
}

/** One piece of output, in the order the agent read it. */
export type ExecOutputEvent = { type: 'stdout'; data: Buffer } | { type: 'stderr'; data: Buffer };

/** Output and result gathered by {@link ExecHandle.collect}. */
export interface CollectedExec {
  stdout: Buffer;
  stderr: Buffer;
  result: ExecResult;
}

/** Options of {@link attachExec}. */
export interface AttachExecOptions {
  /** Gives up on the stream only: the kept process runs on. */
  signal?: AbortSignal;
  /** As {@link ExecOptions.outputHighWaterBytes}. */
  outputHighWaterBytes?: number;
}

/** Default guest deadline of an execution. */
export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

/** A running execution. */
export class ExecHandle {
  /** Resolves with the process id once it started (rejects like `result` if it could not start). */
  readonly pid: Promise<number>;
  /** The `Started` frame: the pid and, for a kept exec's stream, the offsets its output starts at. */
  readonly started: Promise<ExecStarted>;
  /** Resolves with how the process ended; rejects with an {@link AgentError}. */
  readonly result: Promise<ExecResult>;
  /** Output events as they arrive; iterate once. */
  readonly output: AsyncIterable<ExecOutputEvent>;
  private readonly queue: EventQueue<ExecOutputEvent>;
  private cancelled = false;

  /** @internal Use `AgentClient.exec`. */
  constructor(
    private readonly stream: ClientHttp2Stream,
    session: AgentSession,
    deadline: Deadline,
    highWaterBytes: number,
    private readonly operation: 'exec' | 'attachExec' = 'exec',
  ) {
    this.queue = new EventQueue<ExecOutputEvent>(
      (event) => event.data.length,
      highWaterBytes,
      () => stream.pause(),
      () => stream.resume(),
    );
    this.output = this.queue;
    let started: (frame: ExecStarted) => void = () => undefined;
    let failedToStart: (error: Error) => void = () => undefined;
    this.started = new Promise<ExecStarted>((resolve, reject) => {
      started = resolve;
      failedToStart = reject;
    });
    this.started.catch(() => undefined);
    this.pid = this.started.then((frame) => frame.pid);
    this.pid.catch(() => undefined);
    this.result = this.run(session, deadline, started);
    this.result.catch((error: Error) => {
      failedToStart(error);
      this.queue.end(error);
    });
  }

  /** Writes to the process's stdin (requires `stdin: true`); resolves when the agent can take more. */
  async writeStdin(data: Buffer | string): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    if (this.stream.writableEnded || this.stream.destroyed) return;
    if (!this.stream.write(encodeFrame(FrameType.Stdin, bytes))) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.stream.off('drain', done);
          this.stream.off('close', done);
          resolve();
        };
        this.stream.on('drain', done);
        this.stream.on('close', done);
      });
    }
  }

  /** Closes the process's stdin. */
  endStdin(): void {
    if (this.stream.writableEnded || this.stream.destroyed) return;
    this.stream.write(encodeFrame(FrameType.StdinEnd));
  }

  /** Sends a signal (e.g. `SIGTERM`) to the process group. */
  kill(signal = 'SIGKILL'): void {
    if (this.stream.writableEnded || this.stream.destroyed) return;
    this.stream.write(encodeJsonFrame(FrameType.Signal, { signal }));
  }

  /** Gives up on the execution: the agent kills the process group (a kept one runs on); `result` rejects. */
  cancel(): void {
    this.cancelled = true;
    if (!this.stream.closed) this.stream.close(0x8 /* NGHTTP2_CANCEL */);
  }

  /** Reads all output into buffers and waits for the result. */
  async collect(): Promise<CollectedExec> {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    for await (const event of this.output) (event.type === 'stdout' ? stdout : stderr).push(event.data);
    return { stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr), result: await this.result };
  }

  private async run(session: AgentSession, deadline: Deadline, started: (frame: ExecStarted) => void): Promise<ExecResult> {
    const operation = this.operation;
    try {
      const { status } = await session.response(operation, this.stream, deadline);
      if (status !== 200) throw errorFromAgentAnswer(status, await session.body(operation, this.stream, deadline), { operation });
      const decoder = new FrameDecoder();
      let result: ExecResult | undefined;
      await deadline.race(
        new Promise<void>((resolve, reject) => {
          this.stream.on('data', (chunk: Buffer) => {
            try {
              for (const frame of decoder.push(chunk)) {
                if (frame.type === FrameType.Stdout) this.queue.push({ type: 'stdout', data: frame.payload });
                else if (frame.type === FrameType.Stderr) this.queue.push({ type: 'stderr', data: frame.payload });
                else if (frame.type === FrameType.Started) started(decodeJsonPayload<ExecStarted>(frame));
                else if (frame.type === FrameType.Exit) result = decodeJsonPayload<ExecResult>(frame);
                else if (frame.type === FrameType.Error) {
                  const body = decodeJsonPayload<AgentErrorBody>(frame);
                  reject(errorFromAgentAnswer(500, Buffer.from(JSON.stringify(body)), { operation }));
                }
              }
            } catch (error) {
              reject(new AgentProtocolError(`${operation}: ${(error as Error).message}`, { cause: error }));
            }
          });
          this.stream.once('end', resolve);
          this.stream.once('error', (error) => reject(session.streamFailure(operation, error)));
          this.stream.once('close', () => (result ? resolve() : reject(session.streamFailure(operation))));
        }),
      );
      // A vanished channel also ends the stream (without an error): the session's state tells the two apart.
      if (!result)
        throw session.open ? new AgentProtocolError(`${operation}: the agent ended the stream without an exit frame`) : session.streamFailure(operation);
      this.queue.end();
      if (!this.stream.writableEnded) this.stream.end();
      return result;
    } catch (error) {
      if (!this.stream.closed) this.stream.close(0x8 /* NGHTTP2_CANCEL */);
      if (this.cancelled) throw new AgentError('AGENT_ABORTED', `${operation} was cancelled`, { cause: error });
      throw error instanceof AgentError ? error : session.streamFailure(operation, error as Error);
    } finally {
      deadline.clear();
    }
  }
}

/** Starts an execution. */
export function startExec(session: AgentSession, options: ExecOptions): ExecHandle {
  const { signal, outputHighWaterBytes, timeoutMs = DEFAULT_EXEC_TIMEOUT_MS, ...rest } = options;
  const request: ExecRequest = { ...rest, timeoutMs, stdin: options.stdin === true };
  const deadline = session.deadline('exec', { timeoutMs: timeoutMs + DEFAULT_TIMEOUTS_MS.guestDeadlineMargin, ...(signal ? { signal } : {}) }, 0);
  const stream = session.stream('exec', { ':method': 'POST', ':path': ROUTES.exec, 'content-type': 'application/vnd.sandboxd.frames' }, deadline);
  // The request body stays open until the process ended, so kill() can still send Signal frames.
  stream.write(encodeJsonFrame(FrameType.Request, request));
  return new ExecHandle(stream, session, deadline, outputHighWaterBytes ?? 8 * 1024 * 1024);
}

/**
 * (1.8) Attaches to a kept exec (one started with `keep`): a handle like `startExec`'s whose output starts at the
 * offsets of its `started` frame (`from`, or later when the agent no longer has those bytes) and whose `result` is
 * the process's exit. Closing or cancelling it leaves the process running. Rejects with `EXEC_NOT_FOUND` when the
 * agent keeps no such process.
 */
export function attachExec(session: AgentSession, from: ExecAttachRequest, options: AttachExecOptions = {}): ExecHandle {
  // No deadline: the process runs as long as it likes; the link's end (or `signal`) ends the stream.
  const deadline = session.deadline('attachExec', { timeoutMs: Infinity, ...(options.signal ? { signal: options.signal } : {}) }, 0);
  const stream = session.stream('attachExec', { ':method': 'POST', ':path': ROUTES.execAttach, 'content-type': 'application/vnd.sandboxd.frames' }, deadline);
  stream.write(encodeJsonFrame(FrameType.Request, from));
  return new ExecHandle(stream, session, deadline, options.outputHighWaterBytes ?? 8 * 1024 * 1024, 'attachExec');
}
