/**
 * What the server's own pages (the web console, the command-line login page) check of a browser's request:
 * a cookie by name, a secret compared in constant time, and that a browser that says where a request came
 * from says "this origin" (login and form CSRF).
 */
import { timingSafeEqual } from 'node:crypto';
import { parseCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';

/** The value of cookie `name` in the request's Cookie header, or null. */
export function readCookie(request: Pick<FastifyRequest, 'headers'>, name: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  return parseCookie(header)[name] ?? null;
}

/**
 * Every value of cookie `name` in the request's Cookie header, in the order the browser sent them (longest Path
 * first): a name can appear more than once when cookies of different paths or domains share it.
 */
export function readCookieValues(request: Pick<FastifyRequest, 'headers'>, name: string): string[] {
  const header = request.headers.cookie;
  if (!header) return [];
  const values: string[] = [];
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    // The `cookie` package's parse of the one pair (%-escapes undone), as readCookie reads a value.
    values.push(parseCookie(`v=${pair.slice(eq + 1).trim()}`).v ?? '');
  }
  return values;
}

/** Whether two secrets are equal, in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A browser that says where a request came from (Sec-Fetch-Site, Origin) must say "this origin"; clients that
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
