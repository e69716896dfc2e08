/**
 * Errors of the agent client. One table ({@link errorFromAgentAnswer}) maps the agent's error codes to classes,
 * so callers can branch on `instanceof` without knowing the wire.
 */
import { isAgentErrorCode, PATH_ERROR_CODES, type AgentErrorBody } from '@sandboxd/agent/protocol';

/** Base class: every error the client throws. `code` is stable (an agent code or one of the AGENT_* below). */
export class AgentError extends Error {
  override name = 'AgentError';

  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The agent cannot be reached: no socket, the channel closed, or the session ended. */
export class AgentUnavailableError extends AgentError {
  override name = 'AgentUnavailableError';

  constructor(message: string, options?: { cause?: unknown }) {
    super('AGENT_UNAVAILABLE', message, options);
  }
}

/** A call did not finish before its deadline (the request was cancelled in the guest). */
export class AgentTimeoutError extends AgentError {
  override name = 'AgentTimeoutError';

  constructor(
    readonly operation: string,
    readonly timeoutMs: number,
  ) {
    super('AGENT_TIMEOUT', `${operation} did not finish within ${timeoutMs} ms`);
  }
}

/** The agent speaks another protocol major, or answered something that is not the protocol. */
export class AgentProtocolError extends AgentError {
  override name = 'AgentProtocolError';

  constructor(message: string, options?: { cause?: unknown }) {
    super('AGENT_PROTOCOL', message, options);
  }
}

/**
 * The agent's answer was longer than the call's cap (`ANSWER_MAX_BYTES`): the call failed and the answer was
 * cancelled unread. A real agent's answers stay far below the caps; a replaced or broken one does not.
 */
export class AgentAnswerTooLargeError extends AgentError {
  override name = 'AgentAnswerTooLargeError';

  constructor(
    readonly operation: string,
    readonly maxBytes: number,
  ) {
    super('AGENT_ANSWER_TOO_LARGE', `${operation}: the agent's answer is longer than ${formatBytes(maxBytes)}, the most this call reads; it was cancelled`);
  }
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** A guest path is invalid or the file system refused the operation; `code` is e.g. ENOENT, EISDIR, INVALID_PATH. */
export class GuestPathError extends AgentError {
  override name = 'GuestPathError';

  constructor(
    code: string,
    message: string,
    readonly path: string | undefined,
  ) {
    super(code, message);
  }
}

/** A tunnel could not connect: nothing listens on that port in the guest. */
export class GuestPortUnreachableError extends AgentError {
  override name = 'GuestPortUnreachableError';

  constructor(
    readonly port: number,
    message: string,
  ) {
    super('PORT_UNREACHABLE', message);
  }
}

/** Any other error the agent answered (bad request, command not found, tar failed, ...). */
export class AgentOperationError extends AgentError {
  override name = 'AgentOperationError';

  constructor(
    code: string,
    message: string,
    readonly status: number,
  ) {
    super(code, message);
  }
}

/** The error for a non-2xx answer of the agent. `context.port` is set for tunnels. */
export function errorFromAgentAnswer(status: number, payload: Buffer, context: { operation: string; port?: number }): AgentError {
  let body: Partial<AgentErrorBody> = {};
  try {
    body = JSON.parse(payload.toString('utf8')) as Partial<AgentErrorBody>;
  } catch {
    // Not JSON: fall through to a protocol error below.
  }
  if (!isAgentErrorCode(body.code) || typeof body.message !== 'string') {
    return new AgentProtocolError(`${context.operation}: the agent answered status ${status} without an error body`);
  }
  if (PATH_ERROR_CODES.includes(body.code)) return new GuestPathError(body.code, body.message, body.path);
  if (body.code === 'PORT_UNREACHABLE') return new GuestPortUnreachableError(context.port ?? 0, body.message);
  return new AgentOperationError(body.code, `${context.operation}: ${body.message}`, status);
}
