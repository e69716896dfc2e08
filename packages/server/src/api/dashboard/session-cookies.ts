/**
 * The web console's cookies: an HttpOnly session cookie whose value is a random token naming a server-side
 * session (core/auth/console-sessions.ts; never an API key), and a CSRF cookie the console's script reads and
 * echoes in `X-CSRF-Token`. Both are `SameSite=Strict` and `Path=/`.
 *
 * Over HTTPS both names carry the `__Host-` prefix (`__Host-sandboxd_session`): the browser then accepts them
 * only with `Secure`, `Path=/` and no `Domain`, so a sibling host cannot toss one in and no response can
 * path-shadow one. Over HTTPS only the prefixed names are read: a tossed unprefixed cookie is ignored. Over
 * plain HTTP (browsers refuse `__Host-` without `Secure`) the names are bare.
 *
 * A request authenticated by the session cookie alone is accepted for GET and HEAD (reads, the event stream,
 * which `EventSource` cannot add headers to); every other method must also bring the session's CSRF token in
 * the header. That token is derived from the session itself, so it is checked against the session cookie
 * actually presented: an attacker's own session cookie next to the victim's CSRF token is refused. A request
 * that presents two different session cookies (one shadowing the other) is refused outright.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookieValues, sameSecret } from '../browser-guards.ts';

/** The session cookie's name over plain HTTP. */
export const SESSION_COOKIE = 'sandboxd_session';
/** The CSRF cookie's name over plain HTTP. */
export const CSRF_COOKIE = 'sandboxd_csrf';
/** What the names start with over HTTPS. */
export const HOST_PREFIX = '__Host-';
export const CSRF_HEADER = 'x-csrf-token';

/**
 * Whether a cookie name is one of sandboxd's own (`sandboxd_*`, with or without the `__Host-`/`__Secure-`
 * prefix): such a cookie is a sandboxd credential or CSRF token and must never reach, or be set by, a VM.
 * Case-insensitive, as browsers now match the prefixes: stripping a look-alike costs nothing.
 */
export function isSandboxdCookieName(name: string): boolean {
  return /^(?:__host-|__secure-)?sandboxd_/i.test(name.trim());
}

/** True for methods that must not change anything, which the session cookie alone may call. */
export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

export interface ConsoleCookieNames {
  session: string;
  csrf: string;
}

/** The console's cookie names for a request's scheme: `__Host-` prefixed over HTTPS, bare over HTTP. */
export function consoleCookieNames(request: Pick<FastifyRequest, 'protocol'>): ConsoleCookieNames {
  const prefix = request.protocol === 'https' ? HOST_PREFIX : '';
  return { session: prefix + SESSION_COOKIE, csrf: prefix + CSRF_COOKIE };
}

/**
 * The session token the request's cookie carries: null without one, 'ambiguous' when it carries two different
 * ones (a second cookie of the same name on a longer path, which is what a shadowing attacker sets).
 */
export function readSessionCookie(request: Pick<FastifyRequest, 'headers' | 'protocol'>): string | 'ambiguous' | null {
  const values = sessionCookieValues(request);
  if (values.length === 0) return null;
  return values.length > 1 ? 'ambiguous' : values[0]!;
}

/** Every distinct session token the request's cookies carry (sign-out ends them all). */
export function sessionCookieValues(request: Pick<FastifyRequest, 'headers' | 'protocol'>): string[] {
  return [...new Set(readCookieValues(request, consoleCookieNames(request).session).filter((v) => v !== ''))];
}

/** Whether the request's CSRF header is `expected`, the CSRF token of the session its cookie names. */
export function hasCsrfProof(request: Pick<FastifyRequest, 'headers'>, expected: string): boolean {
  const header = request.headers[CSRF_HEADER];
  return typeof header === 'string' && sameSecret(header, expected);
}

function attributes(request: FastifyRequest, maxAgeSeconds: number): string {
  return `; Path=/; SameSite=Strict; Max-Age=${maxAgeSeconds}${request.protocol === 'https' ? '; Secure' : ''}`;
}

/** Sets the session cookie (`token`) and the CSRF cookie (`csrf`), both valid `maxAgeSeconds`. */
export function setSessionCookies(request: FastifyRequest, reply: FastifyReply, token: string, csrf: string, maxAgeSeconds: number): void {
  const names = consoleCookieNames(request);
  reply.header('set-cookie', [
    `${names.session}=${token}${attributes(request, maxAgeSeconds)}; HttpOnly`,
    `${names.csrf}=${csrf}${attributes(request, maxAgeSeconds)}`,
  ]);
}

/** Expires both cookies (sign out); over HTTPS the bare names too, left from plain-HTTP visits or tossed in. */
export function clearSessionCookies(request: FastifyRequest, reply: FastifyReply): void {
  const names = request.protocol === 'https' ? [consoleCookieNames(request), { session: SESSION_COOKIE, csrf: CSRF_COOKIE }] : [consoleCookieNames(request)];
  reply.header(
    'set-cookie',
    names.flatMap((n) => [`${n.session}=${attributes(request, 0)}; HttpOnly`, `${n.csrf}=${attributes(request, 0)}`]),
  );
}
