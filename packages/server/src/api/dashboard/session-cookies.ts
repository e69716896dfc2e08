/**
 * The web console's session: an HttpOnly cookie that carries a bearer token (never an API key), and a CSRF
 * cookie the console's script reads and echoes in `X-CSRF-Token` (double submit). Both are
 * `SameSite=Strict`, `Path=/`, and `Secure` when the request came over HTTPS.
 *
 * A request authenticated by the session cookie alone is accepted for GET and HEAD (reads, the event stream,
 * which `EventSource` cannot add headers to); every other method must also bring the CSRF header equal to the
 * CSRF cookie. A cross-site page can make the browser send neither cookie (SameSite=Strict) nor read the CSRF
 * cookie to forge the header.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookie, sameSecret } from '../browser-guards.ts';

export const SESSION_COOKIE = 'sandboxd_session';
export const CSRF_COOKIE = 'sandboxd_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/** True for methods that must not change anything, which the session cookie alone may call. */
export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** Whether the request's CSRF header matches its CSRF cookie. */
export function hasCsrfProof(request: Pick<FastifyRequest, 'headers'>): boolean {
  const cookie = readCookie(request, CSRF_COOKIE);
  const header = request.headers[CSRF_HEADER];
  return typeof header === 'string' && cookie !== null && cookie.length >= 16 && sameSecret(cookie, header);
}

function attributes(request: FastifyRequest, maxAgeSeconds: number): string {
  return `; Path=/; SameSite=Strict; Max-Age=${maxAgeSeconds}${request.protocol === 'https' ? '; Secure' : ''}`;
}

/** Sets both cookies for a token valid `maxAgeSeconds`; returns the CSRF token the console echoes. */
export function setSessionCookies(request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number): string {
  const csrf = randomBytes(32).toString('base64url');
  reply.header('set-cookie', [
    `${SESSION_COOKIE}=${token}${attributes(request, maxAgeSeconds)}; HttpOnly`,
    `${CSRF_COOKIE}=${csrf}${attributes(request, maxAgeSeconds)}`,
  ]);
  return csrf;
}

/** Expires both cookies (sign out). */
export function clearSessionCookies(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', [`${SESSION_COOKIE}=${attributes(request, 0)}; HttpOnly`, `${CSRF_COOKIE}=${attributes(request, 0)}`]);
}
