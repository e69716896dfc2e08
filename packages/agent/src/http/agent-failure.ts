/**
 * Errors a route throws to answer with a protocol error code, and the mapping of any thrown value to an
 * {@link AgentErrorBody}. Node's errno errors on paths keep their code (ENOENT, EISDIR...), so the host can
 * tell "no such file" from "permission denied".
 */
import { AGENT_ERROR_STATUS, isAgentErrorCode, PATH_ERROR_CODES, type AgentErrorBody, type AgentErrorCode } from '../protocol/errors.ts';

/** A failure with a protocol error code; its message goes to the host. */
export class AgentFailure extends Error {
  override readonly name = 'AgentFailure';

  constructor(
    readonly code: AgentErrorCode,
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
}

/** The error body and HTTP status for anything a route threw. */
export function toErrorAnswer(error: unknown): { status: number; body: AgentErrorBody } {
  if (error instanceof AgentFailure) {
    const body: AgentErrorBody = { code: error.code, message: error.message };
    if (error.path !== undefined) body.path = error.path;
    return { status: AGENT_ERROR_STATUS[error.code], body };
  }
  const errno = error as NodeJS.ErrnoException;
  if (isAgentErrorCode(errno?.code) && PATH_ERROR_CODES.includes(errno.code)) {
    const body: AgentErrorBody = { code: errno.code, message: describeErrno(errno) };
    if (errno.path !== undefined) body.path = errno.path;
    return { status: AGENT_ERROR_STATUS[errno.code], body };
  }
  return { status: 500, body: { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) } };
}

function describeErrno(error: NodeJS.ErrnoException): string {
  const what: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EEXIST: 'already exists',
    ENOTDIR: 'not a directory',
    EISDIR: 'is a directory',
    ENOTEMPTY: 'directory not empty',
    ELOOP: 'too many levels of symbolic links',
    ENAMETOOLONG: 'file name too long',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on device',
    EDQUOT: 'disk quota exceeded',
  };
  const reason = what[error.code ?? ''] ?? error.message;
  return error.path ? `${error.path}: ${reason}` : reason;
}
