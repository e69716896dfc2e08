/**
 * Requests over the HTTP/2 session to the agent: opening streams with a deadline, reading answers, mapping
 * failures to the client's error classes. The operation modules (`exec.ts`, `files.ts`, ...) build on it.
 */
import { constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import type { Readable } from 'node:stream';
import { Deadline, type CallOptions } from './deadline.ts';
import { AgentAnswerTooLargeError, AgentError, AgentProtocolError, AgentUnavailableError, errorFromAgentAnswer } from './errors.ts';

/** Defaults of the deadlines, by kind of call. */
export const DEFAULT_TIMEOUTS_MS = {
  /** hello, ping, stat, list, mkdir, remove, usage, restore. */
  control: 15_000,
  /** File transfers and archive extraction (100 MiB at 5 MiB/s under TCG is 20 s). */
  transfer: 600_000,
  /** Snapshot preparation waits for the spare interpreter to start, which takes seconds under TCG. */
  prepare: 60_000,
  /** Added to an exec's or Python run's own guest deadline. */
  guestDeadlineMargin: 10_000,
} as const;

/**
 * The most bytes of one answer the host reads into memory, by kind of call. The guest agent is not trusted (the
 * user is root in the guest and can replace it), so an answer beyond its cap fails the call and is cancelled
 * (RST_STREAM): HTTP/2 flow control then stops the guest from sending more than a window past the cap.
 */
export const ANSWER_MAX_BYTES = {
  /** JSON answers of control calls (hello, ping, stat, mkdir, remove, usage, restore, terminals...) and error bodies. */
  control: 1024 * 1024,
  /** A directory listing: about 100 000 entries. A larger folder fails with a message that names the cap. */
  listDir: 16 * 1024 * 1024,
  /**
   * A Python run's answer: the agent keeps at most 16 MiB of each of stdout and stderr, and JSON escaping of
   * arbitrary bytes can triple them.
   */
  pythonRun: 96 * 1024 * 1024,
} as const;

/** An answer's status and headers. */
export interface AgentResponse {
  status: number;
  headers: IncomingHttpHeaders;
}

/** The HTTP/2 session to one agent. */
export class AgentSession {
  constructor(readonly http2: ClientHttp2Session) {}

  /** True until the session closed. */
  get open(): boolean {
    return !this.http2.closed && !this.http2.destroyed;
  }

  /** A deadline for one call. */
  deadline(operation: string, options: CallOptions | undefined, defaultTimeoutMs: number): Deadline {
    return new Deadline(operation, options?.timeoutMs ?? defaultTimeoutMs, options?.signal);
  }

  /**
   * Opens a stream; the deadline cancels it (RST_STREAM, so the agent stops the work too). The caller must
   * `deadline.clear()` when done.
   */
  stream(operation: string, headers: OutgoingHttpHeaders, deadline: Deadline): ClientHttp2Stream {
    deadline.check();
    if (!this.open) throw new AgentUnavailableError(`${operation}: the agent session is closed`);
    let stream: ClientHttp2Stream;
    try {
      stream = this.http2.request(headers, { endStream: false });
    } catch (error) {
      throw new AgentUnavailableError(`${operation}: cannot open a stream: ${(error as Error).message}`, { cause: error });
    }
    const cancel = (): void => {
      if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
    };
    deadline.signal.addEventListener('abort', cancel, { once: true });
    stream.once('close', () => deadline.signal.removeEventListener('abort', cancel));
    // Errors surface through the promises below; an unhandled 'error' event would crash the host.
    stream.on('error', () => undefined);
    return stream;
  }

  /** Resolves with the answer's headers. */
  response(operation: string, stream: ClientHttp2Stream, deadline: Deadline): Promise<AgentResponse> {
    return deadline.race(
      new Promise<AgentResponse>((resolve, reject) => {
        const onResponse = (headers: IncomingHttpHeaders): void => {
          cleanup();
          resolve({ status: Number(headers[':status']), headers });
        };
        const onError = (error: Error): void => {
          cleanup();
          reject(this.streamFailure(operation, error));
        };
        const onClose = (): void => {
          cleanup();
          reject(this.streamFailure(operation));
        };
        const cleanup = (): void => {
          stream.off('response', onResponse);
          stream.off('error', onError);
          stream.off('close', onClose);
        };
        stream.once('response', onResponse);
        stream.once('error', onError);
        stream.once('close', onClose);
      }),
    );
  }

  /**
   * Reads a whole body, at most `maxBytes` of it: a longer one cancels the stream and rejects with
   * `AgentAnswerTooLargeError` as soon as the cap is passed, without keeping what came.
   */
  async body(operation: string, stream: Readable, deadline: Deadline, maxBytes: number = ANSWER_MAX_BYTES.control): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let received = 0;
    try {
      await deadline.race(
        (async () => {
          for await (const chunk of stream) {
            received += (chunk as Buffer).length;
            if (received > maxBytes) {
              chunks.length = 0;
              cancelStream(stream);
              throw new AgentAnswerTooLargeError(operation, maxBytes);
            }
            chunks.push(chunk as Buffer);
          }
        })(),
      );
    } catch (error) {
      if (error instanceof AgentError) throw error;
      throw this.streamFailure(operation, error as Error);
    }
    return Buffer.concat(chunks);
  }

  /**
   * Sends a JSON request (or none) and returns the JSON answer; non-2xx answers throw, and so does an answer
   * longer than `maxAnswerBytes` (`AgentAnswerTooLargeError`).
   */
  async json<T>(
    operation: string,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    options: CallOptions | undefined,
    defaultTimeoutMs: number,
    maxAnswerBytes: number = ANSWER_MAX_BYTES.control,
  ): Promise<T> {
    const deadline = this.deadline(operation, options, defaultTimeoutMs);
    try {
      const headers: OutgoingHttpHeaders = { ':method': method, ':path': path };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const stream = this.stream(operation, headers, deadline);
      stream.end(body === undefined ? undefined : JSON.stringify(body));
      const { status } = await this.response(operation, stream, deadline);
      const payload = await this.body(operation, stream, deadline, status >= 200 && status <= 299 ? maxAnswerBytes : ANSWER_MAX_BYTES.control);
      if (status < 200 || status > 299) throw errorFromAgentAnswer(status, payload, { operation });
      if (!this.open && payload.length === 0) throw this.streamFailure(operation);
      return parseJson<T>(operation, payload);
    } finally {
      deadline.clear();
    }
  }

  /** The error for a stream that failed or closed early: the session's fate decides which. */
  streamFailure(operation: string, cause?: Error): AgentError {
    if (!this.open) return new AgentUnavailableError(`${operation}: the agent session closed`, { cause });
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    return new AgentProtocolError(`${operation}: the agent ended the stream early${code ? ` (${code})` : ''}`, { cause });
  }
}

/** Stops an answer being read: RST_STREAM (CANCEL) for an HTTP/2 stream, so the agent stops sending; else destroy. */
function cancelStream(stream: Readable): void {
  const http2Stream = stream as Partial<ClientHttp2Stream> & Readable;
  if (typeof http2Stream.close === 'function' && 'rstCode' in http2Stream) {
    if (!http2Stream.closed) http2Stream.close(constants.NGHTTP2_CANCEL);
  } else {
    stream.destroy();
  }
}

/** Parses a JSON answer. */
export function parseJson<T>(operation: string, payload: Buffer): T {
  try {
    return JSON.parse(payload.toString('utf8')) as T;
  } catch (error) {
    throw new AgentProtocolError(`${operation}: the agent's answer is not JSON`, { cause: error });
  }
}
