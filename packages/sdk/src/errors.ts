/**
 * Error classes of the client, and the one table that maps an HTTP status and the server's `code` (and,
 * where the meaning depends on it, the kind of operation) to a class.
 *
 * `instanceof` works even when two copies of this package are loaded (two bundles, two versions in
 * node_modules): every error carries the names of its class chain under a `Symbol.for` brand, and the
 * classes answer `instanceof` from that brand instead of from the prototype chain.
 */

import type { CommandResult } from './resources/commands.ts';

/** Registry-wide brand: the same symbol in every copy of the package. */
const KINDS = Symbol.for('@sandboxd/sdk/error-kinds');

/** One entry of FastAPI's validation error list (422). */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface SandboxdErrorOptions {
  /** HTTP status, when the server answered. */
  status?: number;
  /** The server's stable error code (docs/errors.md), when it sent one. */
  code?: string;
  /** The parsed response body. */
  body?: unknown;
  /** The server's request id (`x-request-id`), to find its log line. */
  requestId?: string;
  /** "POST /execute". */
  operation?: string;
  cause?: unknown;
}

type ErrorClass = { kind: string; prototype: SandboxdError };

/** Base class of every error the client throws. */
export class SandboxdError extends Error {
  static readonly kind: string = 'SandboxdError';
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly body: unknown;
  readonly requestId: string | undefined;
  readonly operation: string | undefined;

  constructor(message: string, options: SandboxdErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = (new.target as unknown as ErrorClass).kind;
    this.status = options.status;
    this.code = options.code;
    this.body = options.body;
    this.requestId = options.requestId;
    this.operation = options.operation;
    // The kinds of every class from this one up to SandboxdError, most specific first.
    const kinds: string[] = [];
    for (let c: unknown = new.target; c && Object.prototype.hasOwnProperty.call(c, 'kind'); c = Object.getPrototypeOf(c)) kinds.push((c as ErrorClass).kind);
    Object.defineProperty(this, KINDS, { value: Object.freeze(kinds), enumerable: false });
  }

  /** True for any error from any copy of this package whose class is this one or below it. */
  static override [Symbol.hasInstance]<T>(this: { prototype: T }, value: unknown): value is T {
    const kinds = value !== null && typeof value === 'object' ? (value as Record<symbol, unknown>)[KINDS] : undefined;
    return Array.isArray(kinds) && kinds.includes((this as unknown as ErrorClass).kind);
  }
}

/** 401: missing, wrong, expired or deleted API key (and 403 on kill, as the original clients do). */
export class AuthenticationError extends SandboxdError {
  static override readonly kind: string = 'AuthenticationError';
}

/** 429 RATE_LIMITED: too many executions for the plan; wait `retryAfter` seconds. */
export class RateLimitError extends SandboxdError {
  static override readonly kind: string = 'RateLimitError';
  /** Seconds to wait before trying again (from `Retry-After` or the body), when the server said. */
  readonly retryAfter: number | undefined;
  constructor(message: string, options: SandboxdErrorOptions & { retryAfter?: number } = {}) {
    super(message, options);
    this.retryAfter = options.retryAfter;
  }
}

/** 429 QUOTA_EXCEEDED: the plan's concurrent VMs or vCPUs are used up; kill a VM first. */
export class QuotaExceededError extends SandboxdError {
  static override readonly kind: string = 'QuotaExceededError';
}

/** No usable answer: connection failures, time-outs, and server errors (≥ 500). */
export class NetworkError extends SandboxdError {
  static override readonly kind: string = 'NetworkError';
  /** True when the client gave up waiting (its `timeout`). */
  readonly timedOut: boolean;
  constructor(message: string, options: SandboxdErrorOptions & { timedOut?: boolean } = {}) {
    super(message, options);
    this.timedOut = options.timedOut ?? false;
  }
}

/**
 * An execution that did not finish well: 408 EXECUTION_TIMEOUT (the run goes on; poll `executionId`), or
 * a failed run when the caller asked for errors (`throwOnError`).
 */
export class ExecutionError extends SandboxdError {
  static override readonly kind: string = 'ExecutionError';
  readonly executionId: number | undefined;
  readonly sessionId: string | undefined;
  readonly exitCode: number | null | undefined;
  readonly stdout: string | undefined;
  readonly stderr: string | undefined;
  constructor(
    message: string,
    options: SandboxdErrorOptions & { executionId?: number; sessionId?: string; exitCode?: number | null; stdout?: string; stderr?: string } = {},
  ) {
    super(message, options);
    this.executionId = options.executionId;
    this.sessionId = options.sessionId;
    this.exitCode = options.exitCode;
    this.stdout = options.stdout;
    this.stderr = options.stderr;
  }
}

/**
 * A command of `session.commands` that ended other than with exit code 0 (E2B's `CommandExitError`): `run` rejects
 * with it, and so does a handle's `wait()`. It carries the whole result (`result`; `exitCode`, `stdout`, `stderr`,
 * `error`, `signal`, `pid`, `processId` on the error itself). A command a signal ended (killed, timed out) has
 * exit code -1 and `signal`. Not an HTTP error: the server answered, the command failed.
 */
export class CommandExitError extends ExecutionError {
  static override readonly kind: string = 'CommandExitError';
  declare readonly exitCode: number;
  declare readonly stdout: string;
  declare readonly stderr: string;
  /** The result, as `run` resolves it for a command that succeeds. */
  readonly result: CommandResult;
  /** Why it ended other than by exiting (killed, timed out, its VM went away). */
  readonly error: string | undefined;
  /** The signal that ended it, when one did. */
  readonly signal: string | undefined;
  readonly pid: number | null;
  readonly processId: string;

  constructor(result: CommandResult, options: SandboxdErrorOptions = {}) {
    const tail = result.stderr.trimEnd().split('\n').at(-1)?.slice(-200);
    const how = result.error ?? `exited with code ${result.exitCode}`;
    super(`command ${result.processId} ${how}${tail ? `: ${tail}` : ''}`, {
      ...options,
      exitCode: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
    });
    this.result = result;
    this.error = result.error;
    this.signal = result.signal;
    this.pid = result.pid;
    this.processId = result.processId;
  }
}

/** 404 on an operation of a session (execute, files, status, kill): no such session, or no VM. */
export class SessionError extends SandboxdError {
  static override readonly kind: string = 'SessionError';
}

/** 404 on anything else. */
export class NotFoundError extends SandboxdError {
  static override readonly kind: string = 'NotFoundError';
}

/** 422: the request did not validate; `detail` lists each problem. */
export class ValidationError extends SandboxdError {
  static override readonly kind: string = 'ValidationError';
  readonly detail: ValidationIssue[];
  constructor(message: string, options: SandboxdErrorOptions & { detail?: ValidationIssue[] } = {}) {
    super(message, options);
    this.detail = options.detail ?? [];
  }
}

/** 501 NOT_IMPLEMENTED: the server lists the operation but does not do it (yet). */
export class UnsupportedOperationError extends SandboxdError {
  static override readonly kind: string = 'UnsupportedOperationError';
}

/**
 * A template build ended `failed` (not an HTTP error: the build is a job the client waited for). `error` is the
 * server's reason: the step it failed in, what happened and the last lines that step printed.
 */
export class TemplateBuildFailedError extends SandboxdError {
  static override readonly kind: string = 'TemplateBuildFailedError';
  readonly templateId: string;
  readonly step: string | null;
  constructor(message: string, options: SandboxdErrorOptions & { templateId: string; step: string | null }) {
    super(message, options);
    this.templateId = options.templateId;
    this.step = options.step;
  }
}

/** Base of the browser automation errors (`client.browser`). */
export class BrowserError extends SandboxdError {
  static override readonly kind: string = 'BrowserError';
}
/** 404 on an operation of a browser session: it is closed, expired, or not yours. */
export class BrowserSessionError extends BrowserError {
  static override readonly kind: string = 'BrowserSessionError';
}
/** An interaction with the page failed (see ElementNotFoundError). */
export class BrowserInteractionError extends BrowserError {
  static override readonly kind: string = 'BrowserInteractionError';
}
/** 408 BROWSER_TIMEOUT: a navigation, wait, interaction or render ran past its timeout; the session stays usable. */
export class BrowserTimeoutError extends BrowserError {
  static override readonly kind: string = 'BrowserTimeoutError';
}
/** 400 NAVIGATION_FAILED: the page could not be loaded (DNS, refused, TLS, a scheme not allowed). */
export class BrowserNavigationError extends BrowserError {
  static override readonly kind: string = 'BrowserNavigationError';
}
/** 404 ELEMENT_NOT_FOUND: an interaction's selector matched nothing within its timeout. */
export class ElementNotFoundError extends BrowserInteractionError {
  static override readonly kind: string = 'ElementNotFoundError';
  readonly selector: string | undefined;
  constructor(message: string, options: SandboxdErrorOptions & { selector?: string } = {}) {
    super(message, options);
    this.selector = options.selector;
  }
}

/**
 * What an operation is, where the same status means different things: a 404 on a session's operation is
 * a SessionError, on kill 403 is an authentication error, on a browser interaction a BrowserSessionError.
 * The browser kinds: `browser` (an operation of a session), `browser.session.create`, `browser.navigate`,
 * `browser.element` (an interaction with an element), `browser.render`.
 */
export type OperationKind = 'session' | 'kill' | 'execute' | 'browser' | 'browser.session.create' | 'browser.navigate' | 'browser.element' | 'browser.render';

export interface ErrorContext {
  status: number;
  code: string | undefined;
  kind: OperationKind | undefined;
}

interface ErrorRule {
  status: number | ((status: number) => boolean);
  code?: string;
  kinds?: OperationKind[];
  make: (message: string, options: SandboxdErrorOptions, facts: ErrorFacts) => SandboxdError;
}

/** What the response says beyond status and code. */
export interface ErrorFacts {
  retryAfter?: number;
  detail?: ValidationIssue[];
  executionId?: number;
  sessionId?: string;
  selector?: string;
}

const BROWSER: OperationKind[] = ['browser', 'browser.session.create', 'browser.navigate', 'browser.element', 'browser.render'];
/** The browser operations that name a session (a 404 there means the session is not open, or not yours). */
const BROWSER_SESSION: OperationKind[] = ['browser', 'browser.navigate', 'browser.element'];
const SESSION_OPERATIONS: OperationKind[] = ['session', 'kill', 'execute'];

/**
 * THE table: the first matching row decides the class. `status` is the HTTP status, `code` the server's
 * code (docs/errors.md), `kinds` the operations the row is limited to.
 */
export const ERROR_TABLE: readonly ErrorRule[] = [
  { status: 400, code: 'NAVIGATION_FAILED', make: (m, o) => new BrowserNavigationError(m, o) },
  { status: 401, make: (m, o) => new AuthenticationError(m, o) },
  { status: 403, kinds: ['kill'], make: (m, o) => new AuthenticationError(m, o) },
  { status: 404, code: 'ELEMENT_NOT_FOUND', make: (m, o, f) => new ElementNotFoundError(m, { ...o, ...(f.selector ? { selector: f.selector } : {}) }) },
  { status: 404, kinds: BROWSER_SESSION, make: (m, o) => new BrowserSessionError(m, o) },
  { status: 404, kinds: SESSION_OPERATIONS, make: (m, o) => new SessionError(m, o) },
  { status: 404, make: (m, o) => new NotFoundError(m, o) },
  { status: 408, code: 'EXECUTION_TIMEOUT', make: (m, o, f) => new ExecutionError(m, { ...o, ...pick(f, 'executionId', 'sessionId') }) },
  { status: 408, code: 'BROWSER_TIMEOUT', make: (m, o) => new BrowserTimeoutError(m, o) },
  { status: 408, kinds: BROWSER, make: (m, o) => new BrowserTimeoutError(m, o) },
  { status: 422, make: (m, o, f) => new ValidationError(m, { ...o, detail: f.detail ?? [] }) },
  { status: 429, code: 'QUOTA_EXCEEDED', make: (m, o) => new QuotaExceededError(m, o) },
  { status: 429, kinds: ['browser.session.create'], make: (m, o) => new QuotaExceededError(m, o) },
  { status: 429, make: (m, o, f) => new RateLimitError(m, { ...o, ...pick(f, 'retryAfter') }) },
  { status: 501, make: (m, o) => new UnsupportedOperationError(m, o) },
  { status: (s) => s >= 500, make: (m, o) => new NetworkError(m, o) },
];

function pick<T extends object, K extends keyof T>(source: T, ...keys: K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

/** The error for a response, from the table; anything it does not list is a plain SandboxdError. */
export function errorFor(context: ErrorContext, message: string, options: SandboxdErrorOptions, facts: ErrorFacts = {}): SandboxdError {
  for (const rule of ERROR_TABLE) {
    const statusMatches = typeof rule.status === 'function' ? rule.status(context.status) : rule.status === context.status;
    if (!statusMatches) continue;
    if (rule.code !== undefined && rule.code !== context.code) continue;
    if (rule.kinds && (context.kind === undefined || !rule.kinds.includes(context.kind))) continue;
    return rule.make(message, options, facts);
  }
  return new SandboxdError(message, options);
}
