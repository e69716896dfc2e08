/**
 * Turns every error into a message that says what to do, and an exit code:
 * 1 other, 2 usage, 3 authentication, 4 not found, 5 rate limit or quota, 6 server or network, 130 interrupted (Ctrl-C).
 * (`sandbox exec` and `sandbox run` exit with the command's own exit code when it ran.)
 */
import {
  AuthenticationError,
  BrowserNavigationError,
  BrowserSessionError,
  BrowserTimeoutError,
  ElementNotFoundError,
  ExecutionError,
  NetworkError,
  NotFoundError,
  QuotaExceededError,
  RateLimitError,
  SandboxdError,
  SessionError,
  UnsupportedOperationError,
  ValidationError,
} from '@sandboxd/sdk';
import { InterruptedError } from './interrupt.ts';

/** A mistake in the command line itself. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const EXIT = { error: 1, usage: 2, auth: 3, notFound: 4, limited: 5, unavailable: 6, interrupted: 130 } as const;

export interface Explained {
  message: string;
  exitCode: number;
  /** The class name, for --json. */
  type: string;
}

const CLI_AUTH_MESSAGES: Record<string, string> = {
  CLI_AUTH_DENIED: 'The login was denied in the browser. Run `sandbox login` again if that was a mistake.',
  CLI_AUTH_EXPIRED: 'The login expired before it was approved. Run `sandbox login` again.',
  CLI_AUTH_ALREADY_USED: 'This login was already used to create a key. Run `sandbox login` again.',
  CLI_AUTH_INVALID_VERIFIER: 'The server did not accept this login (PKCE verifier mismatch). Run `sandbox login` again.',
  CLI_AUTH_UNKNOWN_CODE: 'The server does not know this login. Run `sandbox login` again.',
};

export function explain(error: unknown, baseUrl: string): Explained {
  const type = error instanceof Error ? error.name : 'Error';
  const id = error instanceof SandboxdError && error.requestId ? ` (request id ${error.requestId})` : '';
  if (error instanceof UsageError) return { type, exitCode: EXIT.usage, message: error.message };
  if (error instanceof InterruptedError) return { type, exitCode: EXIT.interrupted, message: `interrupted: ${error.message}` };
  if (error instanceof AuthenticationError) {
    if (error.status === 403) return { type, exitCode: EXIT.auth, message: `Not allowed: ${error.message}.` };
    return {
      type,
      exitCode: EXIT.auth,
      message: `Not logged in to ${baseUrl}, or the API key is no longer valid (${error.message}). Run \`sandbox login\` (or set SANDBOXD_API_KEY).`,
    };
  }
  if (error instanceof RateLimitError) {
    const wait = error.retryAfter !== undefined ? ` Try again in ${error.retryAfter} s.` : ' Try again in a minute.';
    return { type, exitCode: EXIT.limited, message: `Rate limited: ${error.message}.${wait}` };
  }
  if (error instanceof QuotaExceededError) {
    if (/ \/v1\/browser\//.test(error.operation ?? '')) {
      return {
        type,
        exitCode: EXIT.limited,
        message: `Quota exceeded: ${error.message}. Close a browser session you no longer need (\`sandbox browser sessions\`, \`sandbox browser close ID\`).`,
      };
    }
    if (/ \/v1\/(templates|snapshots)$/.test(error.operation ?? '')) {
      return { type, exitCode: EXIT.limited, message: `Quota exceeded: ${error.message}. \`sandbox template ls\` shows your builds under way.` };
    }
    return {
      type,
      exitCode: EXIT.limited,
      message: `Quota exceeded: ${error.message}. Kill a VM you no longer need (\`sandbox ls\`, \`sandbox kill SESSION\`) or wait for one to expire.`,
    };
  }
  if (error instanceof SessionError) {
    return { type, exitCode: EXIT.notFound, message: `${error.message}. \`sandbox ls\` lists your sandboxes; \`sandbox create\` makes a new session.` };
  }
  if (error instanceof BrowserSessionError) {
    return {
      type,
      exitCode: EXIT.notFound,
      message: `${error.message}: it is closed, expired or not yours. \`sandbox browser sessions\` lists your open browser sessions.`,
    };
  }
  if (error instanceof ElementNotFoundError)
    return { type, exitCode: EXIT.notFound, message: `No element matches ${error.selector ?? 'the selector'} on the page: ${error.message}.` };
  if (error instanceof BrowserTimeoutError)
    return { type, exitCode: EXIT.error, message: `The browser timed out: ${error.message}. A longer --wait-timeout may help.` };
  if (error instanceof BrowserNavigationError) return { type, exitCode: EXIT.error, message: `The page could not be loaded: ${error.message}.` };
  if (error instanceof NotFoundError) return { type, exitCode: EXIT.notFound, message: `Not found: ${error.message}.` };
  if (error instanceof ValidationError)
    return {
      type,
      exitCode: EXIT.usage,
      message: `The server rejected the input: ${error.detail.map((d) => `${d.loc.slice(1).join('.') || d.loc.join('.')}: ${d.msg}`).join('; ')}.`,
    };
  if (error instanceof UnsupportedOperationError) {
    return {
      type,
      exitCode: EXIT.error,
      message: `This server does not support that yet: ${error.operation ?? 'the operation'} answered 501 (${error.message}).`,
    };
  }
  if (error instanceof ExecutionError) {
    const poll = error.executionId !== undefined ? ` (execution ${error.executionId})` : '';
    return { type, exitCode: EXIT.error, message: `${error.message}${poll}.` };
  }
  if (error instanceof NetworkError) {
    if (error.timedOut) return { type, exitCode: EXIT.unavailable, message: `${baseUrl} did not answer in time: ${error.message}.` };
    if (error.status === undefined) {
      return {
        type,
        exitCode: EXIT.unavailable,
        message: `Cannot reach sandboxd at ${baseUrl}: ${error.message}. Is the server running (\`npm start\`)? Choose another with --url or SANDBOXD_URL.`,
      };
    }
    return {
      type,
      exitCode: EXIT.unavailable,
      message: `The server failed (${error.status}${error.code ? ` ${error.code}` : ''}): ${error.message}${id}. Retrying later may help.`,
    };
  }
  if (error instanceof SandboxdError) {
    const known = error.code ? CLI_AUTH_MESSAGES[error.code] : undefined;
    if (known) return { type, exitCode: EXIT.error, message: known };
    return { type, exitCode: EXIT.error, message: `${error.message}${error.code ? ` [${error.code}]` : ''}${id}` };
  }
  if (error instanceof Error && (error as NodeJS.ErrnoException).code === 'ENOENT') return { type, exitCode: EXIT.usage, message: error.message };
  return { type, exitCode: EXIT.error, message: error instanceof Error ? error.message : String(error) };
}
