/**
 * Error answers of the agent: every non-2xx JSON body is an {@link AgentErrorBody} whose `code` is one of
 * {@link AGENT_ERROR_STATUS}'s keys. One table, used by the agent to pick the status and by the host client to
 * pick an error class.
 */

/** Error code → HTTP status the agent answers with. */
export const AGENT_ERROR_STATUS = {
  /** The request is malformed (bad JSON, missing field, value out of range). */
  BAD_REQUEST: 400,
  /** A path is not absolute, contains NUL, or is otherwise unusable. */
  INVALID_PATH: 400,
  /** No such route. */
  NOT_FOUND: 404,
  /** No such file or directory. */
  ENOENT: 404,
  EEXIST: 409,
  ENOTDIR: 409,
  EISDIR: 409,
  ENOTEMPTY: 409,
  ELOOP: 409,
  ENAMETOOLONG: 400,
  EACCES: 403,
  EPERM: 403,
  EROFS: 403,
  ENOSPC: 507,
  EDQUOT: 507,
  /** `exec`: the program was not found in `PATH` or is not executable. */
  COMMAND_NOT_FOUND: 404,
  /** `exec`: the working directory does not exist or is not a directory. */
  INVALID_CWD: 400,
  /** (1.7) `exec`: the guest has no account of the requested `user`. */
  UNKNOWN_USER: 400,
  /** (1.8) `exec/attach`: no kept exec with that pid (never kept, collected, or the VM was rebooted). */
  EXEC_NOT_FOUND: 404,
  /** (1.8) `exec` with `keep`: the agent holds 64 kept execs already (`MAX_KEPT_EXECS`). */
  TOO_MANY_KEPT_EXECS: 429,
  /** `tar` rejected the archive; the message carries its stderr. */
  EXTRACT_FAILED: 422,
  /** A tunnel's target refused or failed the connection: nothing listens on that port. */
  PORT_UNREACHABLE: 502,
  /** No terminal with that id (never created, or killed). */
  TERMINAL_NOT_FOUND: 404,
  /** The VM runs as many terminals as it may; kill one first. */
  TOO_MANY_TERMINALS: 429,
  /** `files/transfer/in`: the chunk the host announced is not in the transfer share. */
  TRANSFER_CHUNK_MISSING: 500,
  /** The privileged helper failed (restore fix-ups). */
  SYSTEM_CHANGE_FAILED: 500,
  /** The operation cannot run now (e.g. a Python context is busy beyond its queue limit). */
  UNAVAILABLE: 503,
  /**
   * (1.3) The operation did not start its answer within its route's limit (`routes.ts`); the work may still be
   * stuck in the guest (e.g. a file-system call that does not return), but nothing else waits for it.
   */
  DEADLINE_EXCEEDED: 504,
  /** Anything unexpected; details stay in the guest. */
  INTERNAL: 500,
} as const;

/** A stable error code of the agent protocol. */
export type AgentErrorCode = keyof typeof AGENT_ERROR_STATUS;

/** Codes that describe a problem with a guest path (the host maps them to `GuestPathError`). */
export const PATH_ERROR_CODES: readonly AgentErrorCode[] = [
  'INVALID_PATH',
  'ENOENT',
  'EEXIST',
  'ENOTDIR',
  'EISDIR',
  'ENOTEMPTY',
  'ELOOP',
  'ENAMETOOLONG',
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOSPC',
  'EDQUOT',
];

/** JSON body of every error answer. */
export interface AgentErrorBody {
  code: AgentErrorCode;
  message: string;
  /** The guest path concerned, for path errors. */
  path?: string;
}

/** True when `code` is a known agent error code. */
export function isAgentErrorCode(code: unknown): code is AgentErrorCode {
  return typeof code === 'string' && Object.hasOwn(AGENT_ERROR_STATUS, code);
}
