/**
 * Host names and host patterns: the one grammar and the one matcher behind every list of hosts a user gives
 * (an egress policy's `allowed_domains`, a vault secret's and a browser credential's `allowed_hosts`) and behind a
 * custom domain's name. A pattern is an exact name (`a.test`: that name only, not its subdomains), a suffix
 * wildcard (`*.a.test`: its subdomains, not `a.test` itself) or `*` (every name), in canonical form: lower case,
 * no trailing dot. Callers keep their own rules as options (whether `*` or an IPv4 address is allowed) and turn a
 * `HostPatternError` into their own error (egress and vault: 400; browser credentials: 422 at the field).
 *
 * A floor below core and api: it imports nothing of the project, so the route schemas (the JSON-schema patterns
 * below) and the core's checks and matching read the same rules.
 */
import { isIPv4 } from 'node:net';

/**
 * One label of a host name as a JSON-schema pattern piece: letters, digits and inner hyphens, 1 to 63 characters
 * (RFC 1123). Internationalized names are written in their `xn--` form.
 */
const LABEL_SOURCE = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';

/** One label of a host name (a custom domain's, say), already in lower case. */
export const HOST_NAME_LABEL = new RegExp(`^${LABEL_SOURCE}$`);

/**
 * JSON-schema pattern of a fully qualified host name: two labels or more, an optional trailing dot (custom
 * domains). The core adds what a pattern cannot say (length, not an address, not sandboxd's own names).
 */
export const DOMAIN_NAME_PATTERN = `^(${LABEL_SOURCE}\\.)+${LABEL_SOURCE}\\.?$`;

/**
 * JSON-schema pattern of a host pattern as the browser credentials take it: an exact host name or IPv4 address,
 * or `*.` and a host name. Neither a port nor a scheme: a pattern names hosts.
 */
export const HOST_PATTERN_PATTERN = `^(\\*\\.)?${LABEL_SOURCE}(\\.${LABEL_SOURCE})*$`;

/**
 * A label of a name a guest may ask for: like a host name's, plus `_` (DNS names such as `_dmarc.a.test` exist,
 * and an egress policy must be able to name what a resolver is asked).
 */
const NAME_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** What a caller accepts besides exact names and `*.suffix` patterns. */
export interface HostPatternRules {
  /** `*` alone, every name (egress policies). Vault secrets and browser credentials refuse it: no binding at all. */
  everyHost?: boolean;
  /** An IPv4 address as an exact entry (browser credentials: a page may be on an address). */
  addresses?: boolean;
}

/** Why an entry is not a host pattern under the caller's rules (the message names the entry). */
export class HostPatternError extends Error {
  constructor(
    readonly entry: string,
    readonly reason: 'every-host' | 'address' | 'not-a-name',
    message: string,
  ) {
    super(message);
    this.name = 'HostPatternError';
  }
}

/**
 * The canonical form of a host name as a guest or a page gives it (a DNS question, an SNI, a Host header's name,
 * a URL's host): lower case, without the trailing dot of a fully qualified name. Nothing else is forgiven (no
 * trimming): a name that is not canonical after this matches nothing.
 */
export function canonicalHostName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** An entry in canonical form (lower case, no trailing dot), or a `HostPatternError` naming it. */
export function normalizeHostPattern(entry: string, rules: HostPatternRules = {}): string {
  const trimmed = String(entry).trim().toLowerCase();
  if (trimmed === '*') {
    if (rules.everyHost) return trimmed;
    throw new HostPatternError(entry, 'every-host', `${JSON.stringify(entry)} would match every host: name the hosts`);
  }
  // A trailing dot (a fully qualified name) is dropped after the check for `*`: `*.` is not `*`.
  const value = trimmed.replace(/\.$/, '');
  const wildcard = value.startsWith('*.');
  const name = wildcard ? value.slice(2) : value;
  if (isIPv4(name)) {
    if (rules.addresses && !wildcard) return name;
    throw new HostPatternError(entry, 'address', `${JSON.stringify(entry)} is an address, not a host name`);
  }
  if (name.length === 0 || name.length > 253 || !name.split('.').every((label) => NAME_LABEL.test(label))) {
    throw new HostPatternError(entry, 'not-a-name', `${JSON.stringify(entry)} is not a host name or "*.domain"`);
  }
  return value;
}

/** Whether a canonical name matches one canonical pattern (exact, `*.suffix`: its subdomains only, or `*`). */
export function matchesHostPattern(name: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1));
  return name === pattern;
}

/** Whether `host` (any case, maybe with a trailing dot) matches one of the canonical `patterns`. */
export function hostMatchesAny(patterns: readonly string[], host: string): boolean {
  const name = canonicalHostName(host);
  return name !== '' && patterns.some((pattern) => matchesHostPattern(name, pattern));
}
