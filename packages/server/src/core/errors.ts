/**
 * Domain errors. The core throws these; the API's error handler maps them to HTTP in one place.
 * Every code here is listed in docs/errors.md (a test keeps the two in step).
 */

/** Stable error codes with their HTTP status. Add a code here and in docs/errors.md together. */
export const ERROR_CODES = {
  BAD_REQUEST: 400,
  WEBHOOK_URL_NOT_ALLOWED: 400,
  CLI_AUTH_PENDING: 400,
  CLI_AUTH_SLOW_DOWN: 400,
  CLI_AUTH_DENIED: 400,
  CLI_AUTH_EXPIRED: 400,
  CLI_AUTH_ALREADY_USED: 400,
  CLI_AUTH_INVALID_VERIFIER: 400,
  CLI_AUTH_UNKNOWN_CODE: 400,
  NAVIGATION_FAILED: 400,
  NOT_AUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ELEMENT_NOT_FOUND: 404,
  EXECUTION_TIMEOUT: 408,
  BROWSER_TIMEOUT: 408,
  CONFLICT: 409,
  VM_GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  UPGRADE_REQUIRED: 426,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  CAPACITY_BUSY: 429,
  INTERNAL_ERROR: 500,
  APP_PORT_UNREACHABLE: 502,
  VM_AGENT_ANSWER_TOO_LARGE: 502,
  GUEST_STORAGE_FULL: 507,
  HOST_STORAGE_LOW: 507,
  HOST_MEMORY_LOW: 503,
  SERVICE_UNAVAILABLE: 503,
  VM_UNAVAILABLE: 503,
  VM_AGENT_UNAVAILABLE: 503,
  NETWORK_GUARD_INACTIVE: 503,
  VAULT_KEY_UNAVAILABLE: 503,
  OBJECT_STORE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error the user can act on: it carries a stable code and a message that says what to change. */
export class AppError extends Error {
  override name = 'AppError';
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. */
    readonly headers: Record<string, string> = {},
    /** Extra fields of the response body next to `detail` and `code` (e.g. the execution id of a 408). */
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message);
    this.statusCode = ERROR_CODES[code];
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const badRequest = (message: string) => new AppError('BAD_REQUEST', message);

/** One problem with the input, in FastAPI's terms (`loc` starts with body, query, path or header). */
export interface InputProblem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/**
 * Input that passed the schema but is still invalid (e.g. a JSON-encoded query parameter that does not
 * parse): answered as a 422 validation error, like schema failures.
 */
export class InputError extends Error {
  override name = 'InputError';
  constructor(readonly problems: InputProblem[]) {
    super(problems.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; '));
  }
}
