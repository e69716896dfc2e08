/**
 * Domain errors. The core throws these; the API's error handler maps them to HTTP in one place.
 * Every code here is listed in docs/errors.md (a test keeps the two in step).
 */

/** Stable error codes with their HTTP status. Add a code here and in docs/errors.md together. */
export const ERROR_CODES = {
  BAD_REQUEST: 400,
  NOT_AUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  SERVICE_UNAVAILABLE: 503,
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
  ) {
    super(message);
    this.statusCode = ERROR_CODES[code];
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const badRequest = (message: string) => new AppError('BAD_REQUEST', message);
