/**
 * Where a vault secret may go in a request: its injection point. A placeholder is swapped for the value there
 * and nowhere else, because every other place a guest can put it (the path, the query, Host, Origin, Referer,
 * Cookie, a header of its choosing) is one a server may echo back, which would hand the guest the value.
 *
 * - `bearer` (the default): `Authorization: Bearer <placeholder>`.
 * - `basic`: `Authorization: Basic base64(user:password)` where the user or the password is the placeholder.
 * - `header`: the one header `name` whose value is exactly `prefix` + placeholder (GitHub's
 *   `Authorization: token <placeholder>` is name `Authorization`, prefix `token `; `X-Api-Key` has prefix "").
 *
 * The header must appear once in the request: with two of them, which one a server reads is its choice, and the
 * other could be echoed. Prefixes and the Bearer/Basic schemes compare case-insensitively (RFC 9110 §11.1).
 */
import { badRequest } from '../errors.ts';

export type Injection = { type: 'bearer' } | { type: 'basic' } | { type: 'header'; name: string; prefix: string };

export const DEFAULT_INJECTION: Injection = { type: 'bearer' };

/** A header field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
const MAX_PREFIX = 64;
/**
 * Headers a secret may not be injected in: the ones that route or frame the request (Host, the framing and
 * hop-by-hop headers, which the proxy rewrites or drops), and the ones browsers and servers commonly reflect.
 */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'origin',
  'referer',
  'accept-encoding',
]);

/** The injection point as given by a client (`type`, and `name`/`prefix` for `header`), checked. */
export function normalizeInjection(input: { type: string; name?: string | undefined; prefix?: string | undefined } | undefined, secretName: string): Injection {
  if (input === undefined) return DEFAULT_INJECTION;
  const where = `secret ${secretName}: inject`;
  if (input.type === 'bearer' || input.type === 'basic') {
    if (input.name !== undefined || input.prefix !== undefined) throw badRequest(`${where}: name and prefix belong to type "header" only`);
    return { type: input.type };
  }
  if (input.type !== 'header') throw badRequest(`${where}: type is "bearer", "basic" or "header"`);
  const name = input.name ?? '';
  if (!TOKEN.test(name)) throw badRequest(`${where}: name must be a header name (letters, digits and !#$%&'*+.^_\`|~-, at most 64)`);
  if (FORBIDDEN_HEADERS.has(name.toLowerCase()) || name.toLowerCase().startsWith('proxy-')) throw badRequest(`${where}: a secret cannot go in ${name}`);
  const prefix = input.prefix ?? '';
  if (prefix.length > MAX_PREFIX || /[^\x20-\x7e]/.test(prefix)) throw badRequest(`${where}: prefix is at most ${MAX_PREFIX} printable ASCII characters`);
  return { type: 'header', name, prefix };
}

/** The injection point stored with a secret (JSON); an unreadable one is the default. */
export function parseInjection(stored: string | null | undefined): Injection {
  try {
    const parsed = JSON.parse(stored ?? '') as Injection;
    if (parsed.type === 'bearer' || parsed.type === 'basic') return { type: parsed.type };
    if (parsed.type === 'header' && typeof parsed.name === 'string' && typeof parsed.prefix === 'string')
      return { type: 'header', name: parsed.name, prefix: parsed.prefix };
  } catch {
    // fall through
  }
  return DEFAULT_INJECTION;
}

/** `Authorization: Bearer`, `Authorization: Basic`, `X-Api-Key: <prefix>`: for log entries and messages. */
export function describeInjection(injection: Injection): string {
  if (injection.type === 'bearer') return 'Authorization: Bearer';
  if (injection.type === 'basic') return 'Authorization: Basic';
  return injection.prefix ? `${injection.name}: ${injection.prefix.trimEnd()}` : injection.name;
}

/** What the injection step knows of a placeholder of the VM's session. */
export interface InjectableSecret {
  injection: Injection;
  /** The value, or null when it is not to be swapped in this request (not bound to the host, deleted, unreadable). */
  value: string | null;
}

/** A request's headers after injection, and where each placeholder was found. */
export interface InjectionResult {
  rawHeaders: string[];
  /** Placeholders swapped for their value at their injection point. */
  swapped: Set<string>;
  /** Placeholders left as they are, each with the places they were found (`the query`, `header Origin`, …). */
  misplaced: Map<string, string[]>;
}

const PLACEHOLDER_PATTERN = /sbxv_[a-z2-7]{26}/g;
const BEARER = /^(Bearer[ \t]+)(\S+)$/i;
const BASIC = /^(Basic[ \t]+)([A-Za-z0-9+/]+={0,2})$/i;

function placeholdersIn(text: string): string[] {
  return text.includes('sbxv_') ? [...new Set(text.match(PLACEHOLDER_PATTERN) ?? [])] : [];
}

/**
 * Swaps each known placeholder (`lookup`) for its value at its injection point and nowhere else; the request
 * target is never rewritten. Unknown placeholders (another session's) are left alone and not reported.
 */
export function injectSecrets(
  request: { path: string; rawHeaders: readonly string[] },
  lookup: (placeholder: string) => InjectableSecret | undefined,
): InjectionResult {
  const result: InjectionResult = { rawHeaders: [...request.rawHeaders], swapped: new Set(), misplaced: new Map() };
  const misplaced = (placeholder: string, where: string) => {
    if (!lookup(placeholder)) return;
    const places = result.misplaced.get(placeholder) ?? [];
    if (!places.includes(where)) places.push(where);
    result.misplaced.set(placeholder, places);
  };
  const queryAt = request.path.indexOf('?');
  const [pathPart, queryPart] = queryAt === -1 ? [request.path, ''] : [request.path.slice(0, queryAt), request.path.slice(queryAt)];
  for (const placeholder of placeholdersIn(pathPart)) misplaced(placeholder, 'the path');
  for (const placeholder of placeholdersIn(queryPart)) misplaced(placeholder, 'the query');

  const counts = new Map<string, number>();
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    const lower = request.rawHeaders[i]!.toLowerCase();
    counts.set(lower, (counts.get(lower) ?? 0) + 1);
  }
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!;
    const value = request.rawHeaders[i + 1]!;
    const lower = name.toLowerCase();
    const once = counts.get(lower) === 1;
    const where = once ? `header ${name}` : `header ${name} (sent ${counts.get(lower)} times)`;
    for (const placeholder of placeholdersIn(name)) misplaced(placeholder, 'a header name');

    const basic = lower === 'authorization' ? BASIC.exec(value) : null;
    if (basic) {
      const swapped = injectBasic(basic[2]!, once, lookup, result, (placeholder) => misplaced(placeholder, `${where} (Basic credentials)`));
      if (swapped !== null) result.rawHeaders[i + 1] = `${basic[1]}${swapped}`;
    }
    const found = placeholdersIn(value);
    if (found.length === 0) continue;
    // Exactly one placeholder making up the value after its prefix: the only shape a swap accepts.
    const only = found.length === 1 ? found[0]! : null;
    const secret = only ? lookup(only) : undefined;
    const prefix = only && value.endsWith(only) ? value.slice(0, value.length - only.length) : null;
    if (only && secret && once && prefix !== null && isInjectionPoint(secret.injection, lower, prefix, value, only)) {
      if (secret.value !== null) {
        result.rawHeaders[i + 1] = prefix + secret.value;
        result.swapped.add(only);
      } else misplaced(only, where); // the reason (not bound, deleted…) is the gateway's to tell
      continue;
    }
    for (const placeholder of found) misplaced(placeholder, where);
  }
  return result;
}

function isInjectionPoint(injection: Injection, lowerName: string, prefix: string, value: string, placeholder: string): boolean {
  if (injection.type === 'bearer') return lowerName === 'authorization' && BEARER.exec(value)?.[2] === placeholder;
  if (injection.type === 'header') return lowerName === injection.name.toLowerCase() && prefix.toLowerCase() === injection.prefix.toLowerCase();
  return false;
}

/** Basic credentials with a placeholder as the user or the password swapped (base64 again); null when unchanged. */
function injectBasic(
  encoded: string,
  once: boolean,
  lookup: (placeholder: string) => InjectableSecret | undefined,
  result: InjectionResult,
  misplaced: (placeholder: string) => void,
): string | null {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const found = placeholdersIn(decoded);
  if (found.length === 0) return null;
  const colon = decoded.indexOf(':');
  const parts = colon === -1 ? [decoded] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
  const swappedHere: string[] = [];
  const swappedParts = parts.map((part, index) => {
    const secret = lookup(part);
    if (!once || !secret || secret.injection.type !== 'basic' || secret.value === null) return part;
    // A user ends at the first colon: a value with one cannot be the user.
    if (index === 0 && parts.length === 2 && secret.value.includes(':')) return part;
    swappedHere.push(part);
    result.swapped.add(part);
    return secret.value;
  });
  // Any occurrence that is not a whole user or password stays a placeholder, and is reported.
  for (const placeholder of found) {
    const occurrences = decoded.split(placeholder).length - 1;
    if (occurrences > swappedHere.filter((part) => part === placeholder).length) misplaced(placeholder);
  }
  return swappedHere.length > 0 ? Buffer.from(swappedParts.join(':'), 'utf8').toString('base64') : null;
}
