/**
 * What of a preview request belongs to sandboxd and never reaches the app in the VM, whatever let the request
 * in (owner, public share, share link or cookie, viewer): the console's and the preview's cookies, `X-API-Key`,
 * the console's CSRF header, the cluster's internal headers, and an `Authorization` that carries a sandboxd
 * credential. The VM's code is untrusted (and a shared port is another user's code), so anything here that
 * reached it would be a key to its visitor's account. The app's own cookies and its own `Authorization`
 * (Basic for its users, a foreign bearer) pass unchanged.
 */
import { looksLikeSandboxdCredential } from '../../core/auth/credential-shape.ts';
import { CSRF_HEADER, isSandboxdCookieName } from '../dashboard/session-cookies.ts';

/** Request headers that only ever carry sandboxd credentials (lower case). */
const SANDBOXD_HEADERS = new Set(['x-api-key', CSRF_HEADER]);
/** The cluster's signed internal headers (`x-sandboxd-node`, `-time`, `-signature`, …). */
const INTERNAL_HEADER_PREFIX = 'x-sandboxd-';

/** Whether a request header (lower-case name) is sandboxd's alone and is dropped whatever its value. */
export function isSandboxdHeader(lowerName: string): boolean {
  return SANDBOXD_HEADERS.has(lowerName) || lowerName.startsWith(INTERNAL_HEADER_PREFIX);
}

/**
 * Whether an `Authorization` value carries a sandboxd credential: a Bearer (or any scheme's) token that is an
 * API key or a sandboxd JWT, or Basic whose user or password is one. sandboxd itself reads only Bearer; the
 * other shapes are how a client might still send a key, and they are dropped just the same.
 */
export function isSandboxdAuthorization(value: string): boolean {
  if (value.includes('sbx_sk_')) return true;
  const [scheme = '', ...rest] = value.trim().split(/\s+/);
  if (rest.some(looksLikeSandboxdCredential) || looksLikeSandboxdCredential(scheme)) return true;
  if (scheme.toLowerCase() === 'basic' && rest.length === 1) {
    const decoded = Buffer.from(rest[0]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const parts = colon < 0 ? [decoded] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    return parts.some(looksLikeSandboxdCredential);
  }
  return false;
}

/**
 * A `Cookie` header without sandboxd's cookies; the app's own pairs are kept byte for byte, in order. Empty
 * when nothing of the app's is left (the header is then not sent at all).
 */
export function withoutSandboxdCookies(cookieHeader: string): string {
  return cookieHeader
    .split(';')
    .filter((pair) => !isSandboxdCookieName(pair.split('=', 1)[0]!))
    .join(';')
    .trim();
}
