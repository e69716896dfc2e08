/**
 * What the preview proxy reads from a request (target, credentials) and what it forwards to the app in the
 * VM: the request's headers without hop-by-hop headers and without anything of sandboxd's (its cookies,
 * credentials, CSRF and internal headers: sandboxd-credentials.ts), whatever the grant, plus the usual
 * X-Forwarded-* headers.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { parseCookie } from 'cookie';
import type { PreviewCredentials } from '../../core/previews.ts';
import { PREVIEW_COOKIE } from '../../core/previews.ts';
import { SHARE_TOKEN_PARAM } from '../../core/shares.ts';
import { looksLikeSandboxdCredential } from '../../core/auth/credential-shape.ts';
import { isSandboxdAuthorization, isSandboxdHeader, withoutSandboxdCookies } from './sandboxd-credentials.ts';

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), besides those named in `Connection`. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Header names that must not be forwarded: hop-by-hop ones and those listed in `Connection`. */
export function hopByHopNames(headers: IncomingHttpHeaders): Set<string> {
  const names = new Set(HOP_BY_HOP);
  const connection = headers.connection;
  if (typeof connection === 'string') for (const name of connection.split(',')) names.add(name.trim().toLowerCase());
  return names;
}

function header(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** The link token in a query string (`a=1&sandboxd_token=…`), or null. */
export function linkTokenOf(query: string): string | null {
  for (const part of query.split('&')) {
    if (part.startsWith(`${SHARE_TOKEN_PARAM}=`)) return decodeURIComponent(part.slice(SHARE_TOKEN_PARAM.length + 1)) || null;
  }
  return null;
}

/** A path with query, minus the link token (the rest of the query is kept byte for byte). */
export function withoutLinkToken(pathAndQuery: string): string {
  const q = pathAndQuery.indexOf('?');
  if (q < 0) return pathAndQuery;
  const kept = pathAndQuery
    .slice(q + 1)
    .split('&')
    .filter((part) => part !== '' && !part.startsWith(`${SHARE_TOKEN_PARAM}=`));
  return kept.length > 0 ? `${pathAndQuery.slice(0, q)}?${kept.join('&')}` : pathAndQuery.slice(0, q);
}

/** The credentials of a preview request. */
export function previewCredentials(headers: IncomingHttpHeaders, query: string): PreviewCredentials {
  const apiKey = header(headers, 'x-api-key');
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(headers, 'authorization') ?? '')?.[1];
  const cookies = typeof headers.cookie === 'string' ? parseCookie(headers.cookie) : {};
  return {
    credential: apiKey ? { value: apiKey, source: 'x-api-key' } : bearer ? { value: bearer, source: 'bearer' } : null,
    cookieToken: cookies[PREVIEW_COOKIE] ?? null,
    linkToken: linkTokenOf(query),
  };
}

/** How a request reached the proxy; deliberately not who it was let in as (the headers do not depend on it). */
export interface ForwardContext {
  /** Who the request came from (for X-Forwarded-For). */
  remoteAddress: string | undefined;
  /** `http` or `https`, as the client sees this server. */
  protocol: string;
  /** The API path prefix the app is served under, for X-Forwarded-Prefix; null for host-name previews. */
  prefix: string | null;
  /** Keep `Connection`/`Upgrade` (a WebSocket handshake is forwarded as is). */
  upgrade: boolean;
}

/**
 * The headers to send to the app, as name/value pairs (repeated headers stay repeated). The same for every
 * grant: sandboxd's cookies, keys, tokens, CSRF and internal headers never reach a VM, even the owner's own
 * (a prompt-injected agent in it is as untrusted as a stranger's code behind a share link).
 */
export function forwardedHeaders(request: IncomingMessage, context: ForwardContext): [string, string][] {
  const drop = context.upgrade
    ? new Set([...hopByHopNames(request.headers)].filter((name) => name !== 'connection' && name !== 'upgrade'))
    : hopByHopNames(request.headers);
  for (const name of ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-prefix', 'forwarded']) drop.add(name);
  const out: [string, string][] = [];
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    // Any header whose whole value is a sandboxd credential goes too: the E2B facade's X-Access-Token and
    // E2B-Traffic-Access-Token (session tokens), or a key a client sent under a name of its own.
    if (drop.has(lower) || isSandboxdHeader(lower)) continue;
    if (lower !== 'cookie' && lower !== 'authorization' && looksLikeSandboxdCredential(value)) continue;
    if (lower === 'authorization' && isSandboxdAuthorization(value)) continue;
    if (lower === 'cookie') {
      // Only sandboxd's cookies are taken out; the app's cookies pass byte for byte.
      const rest = withoutSandboxdCookies(value);
      if (rest !== '') out.push([name, rest]);
      continue;
    }
    out.push([name, value]);
  }
  const earlier = header(request.headers, 'x-forwarded-for');
  const remote = context.remoteAddress ?? 'unknown';
  out.push(['X-Forwarded-For', earlier ? `${earlier}, ${remote}` : remote]);
  out.push(['X-Forwarded-Proto', context.protocol]);
  const host = header(request.headers, 'host');
  if (host) out.push(['X-Forwarded-Host', host]);
  if (context.prefix) out.push(['X-Forwarded-Prefix', context.prefix]);
  return out;
}
