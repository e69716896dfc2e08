/**
 * Request authentication. Credentials are read, in order, from `X-API-Key`, `Authorization: Bearer`, the
 * web console's session cookie (with a CSRF header for anything but reads), and (only for the operations whose
 * bodies have one) the `api_key` body or form field, as the original service's clients send them. The first
 * credential present decides.
 *
 * Header credentials are checked in `onRequest`, before a byte of the body is read: a caller without
 * them is refused at once, whatever it is still sending. Operations that also take the key in the body
 * read an anonymous body only up to `SANDBOXD_UNAUTHENTICATED_BODY_LIMIT_BYTES` and check its `api_key`
 * in `preValidation`: after the body is parsed, before it is validated (so an anonymous caller gets 401,
 * not a 422 that describes the schema).
 */
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler, preParsingAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import { notAuthenticated, type Authenticator, type CredentialSource, type Principal } from '../core/authenticator.ts';
import { AppError } from '../core/errors.ts';
import { consoleCookieNames, hasCsrfProof, isSafeMethod, readSessionCookie } from './dashboard/session-cookies.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hooks on authenticated routes. */
    principal: Principal | null;
  }
}

/** The hooks of an operation that accepts the key in its body as well as in a header. */
export interface BodyKeyAuthHooks {
  onRequest: onRequestAsyncHookHandler;
  preParsing: preParsingAsyncHookHandler;
  preValidation: preValidationAsyncHookHandler;
}

export interface AuthHooks {
  /** onRequest hook: header credentials, checked before the body is read. */
  requireAuth: onRequestAsyncHookHandler;
  /** Spread into the route options of operations whose body has an `api_key` field. */
  requireAuthOrBodyKey: BodyKeyAuthHooks;
  /** onRequest hook: authenticates a header credential when there is one (multipart uploads check the rest). */
  headerAuthIfPresent: onRequestAsyncHookHandler;
}

/**
 * The web console's session cookie (api/dashboard/session-cookies.ts), when no header credential is present: it
 * names a server-side session. Any method but GET and HEAD needs that session's CSRF token in the header too:
 * without it the cookie is no credential (401, which every authenticated operation declares), so the cookie
 * alone may only read. Answers null when there is no session cookie.
 */
async function sessionCookiePrincipal(request: FastifyRequest, authenticator: Authenticator): Promise<Principal | null> {
  const token = readSessionCookie(request);
  if (token === null) return null;
  const names = consoleCookieNames(request);
  if (token === 'ambiguous') {
    throw new AppError(
      'NOT_AUTHENTICATED',
      `Not authenticated: the request carries two different ${names.session} cookies (one set for a longer path shadows the console's); sign in again`,
    );
  }
  const { principal, csrfToken } = await authenticator.authenticateConsoleSession(token);
  if (!isSafeMethod(request.method) && !hasCsrfProof(request, csrfToken)) {
    throw new AppError(
      'NOT_AUTHENTICATED',
      `Not authenticated: a request with the console's session cookie must send that session's CSRF token (the ${names.csrf} cookie) in the X-CSRF-Token header`,
    );
  }
  return principal;
}

/** The credential in `X-API-Key` or `Authorization: Bearer`, if any. */
function headerCredential(headers: FastifyRequest['headers']): { credential: string; source: CredentialSource } | null {
  const headerKey = headers['x-api-key'];
  if (typeof headerKey === 'string' && headerKey.trim() !== '') return { credential: headerKey.trim(), source: 'x-api-key' };
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1]) return { credential: match[1], source: 'bearer' };
  }
  return null;
}

/** The error for an anonymous body past the limit: it says how to send more. */
export function anonymousBodyTooLarge(limitBytes: number): AppError {
  return new AppError(
    'PAYLOAD_TOO_LARGE',
    `Without an X-API-Key or Authorization header at most ${limitBytes} bytes of a request body are read before its api_key field authenticates it; send the key in a header for larger requests`,
  );
}

/**
 * Counts the bytes of an anonymous body and fails past `limitBytes` while the request is still anonymous
 * (multipart uploads authenticate part-way, when their api_key field arrives).
 */
function anonymousBodyLimiter(request: FastifyRequest, limitBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > limitBytes && !request.principal) callback(anonymousBodyTooLarge(limitBytes));
      else callback(null, chunk);
    },
  });
}

/** Adds `request.principal` and returns the hooks that routes use to require authentication. */
export function createAuthHooks(app: FastifyInstance, authenticator: Authenticator, anonymousBodyLimitBytes: number): AuthHooks {
  app.decorateRequest('principal', null);
  const authenticateHeader = async (request: FastifyRequest): Promise<boolean> => {
    const found = headerCredential(request.headers);
    if (found) {
      request.principal = await authenticator.authenticate(found.credential, found.source);
      return true;
    }
    request.principal = await sessionCookiePrincipal(request, authenticator);
    return request.principal !== null;
  };
  return {
    requireAuth: async (request) => {
      if (!(await authenticateHeader(request))) throw notAuthenticated();
    },
    headerAuthIfPresent: async (request) => {
      await authenticateHeader(request);
    },
    requireAuthOrBodyKey: {
      onRequest: async (request) => {
        if (await authenticateHeader(request)) return;
        // Refuse a declared oversize anonymous body before reading any of it.
        const declared = Number(request.headers['content-length']);
        if (declared > anonymousBodyLimitBytes) throw anonymousBodyTooLarge(anonymousBodyLimitBytes);
      },
      preParsing: async (request, _reply, payload) => {
        if (request.principal) return payload;
        const limited = anonymousBodyLimiter(request, anonymousBodyLimitBytes);
        // pipe() does not pass on a client that goes away mid-body; the parser must hear of it.
        payload.once('close', () => {
          if (!request.raw.complete) limited.destroy(new AppError('BAD_REQUEST', 'the request body ended early'));
        });
        return payload.pipe(limited);
      },
      preValidation: async (request) => {
        if (request.principal) return;
        const body = request.body as Record<string, unknown> | undefined | null;
        const bodyKey = body && typeof body === 'object' ? body.api_key : undefined;
        if (typeof bodyKey !== 'string' || bodyKey.trim() === '') throw notAuthenticated();
        request.principal = await authenticator.authenticate(bodyKey.trim(), 'api_key field');
      },
    },
  };
}

/** The principal of an authenticated request (routes behind the auth hooks only). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw notAuthenticated();
  return request.principal;
}
