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
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'sandboxd_session';
export const CSRF_COOKIE = 'sandboxd_csrf';
export const CSRF_HEADER = 'x-csrf-token';

/** The value of cookie `name` in the request's Cookie header, or null. */
export function readCookie(request: Pick<FastifyRequest, 'headers'>, name: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}

function sameValue(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True for methods that must not change anything, which the session cookie alone may call. */
export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** Whether the request's CSRF header matches its CSRF cookie. */
export function hasCsrfProof(request: Pick<FastifyRequest, 'headers'>): boolean {
  const cookie = readCookie(request, CSRF_COOKIE);
  const header = request.headers[CSRF_HEADER];
  return typeof header === 'string' && cookie !== null && cookie.length >= 16 && sameValue(cookie, header);
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

/**
 * A browser that says where a request came from (Sec-Fetch-Site, Origin) must say "this origin". Sign-in
 * checks it so another site cannot sign a visitor in to the other site's account (login CSRF); clients that
 * are not browsers send neither header.
 */
export function isSameOriginOrNotBrowser(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false; // includes the opaque origin "null"
  }
}
