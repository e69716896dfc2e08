/**
 * Which names may be claimed as custom domains, and the name of the record that proves a claim. A claim must
 * name a real DNS host name that is neither an address nor one of sandboxd's own names: the API's host and
 * the app domain (whose subdomains are VM previews) are never handed to a user.
 */
import { isIP } from 'node:net';
import { canonicalHostName, HOST_NAME_LABEL } from '../contract/host-patterns.ts';

/** The label of the TXT record that proves a claim: `_sandboxd-challenge.<domain>`. */
export const CHALLENGE_LABEL = '_sandboxd-challenge';

/** The longest name: 253 characters (RFC 1035's 255 octets on the wire) less room for the challenge label. */
export const MAX_DOMAIN_LENGTH = 253 - CHALLENGE_LABEL.length - 1;

/** The name of the TXT record a claim of `domain` is proven by. */
export function challengeName(domain: string): string {
  return `${CHALLENGE_LABEL}.${domain}`;
}

/** Lower case, one trailing dot dropped: DNS names compare without case, and the root dot is implied. */
export function normalizeDomain(raw: string): string {
  return canonicalHostName(raw.trim());
}

/** Lower-cased host of a `Host` header value without its port or trailing dot; null for an empty one. */
export function hostnameOf(hostHeader: string | undefined): string | null {
  if (!hostHeader) return null;
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) return null; // an IPv6 literal is never a custom domain
  const name = host.replace(/:\d*$/, '').replace(/\.$/, '');
  return name === '' ? null : name;
}

/** Names of this server that no user may claim. */
export interface ReservedNames {
  /** The API's own host names (from the public URL, and the listen address when it is a name). */
  apiHosts: string[];
  /** `SANDBOXD_APP_DOMAIN`: it and every name under it are preview hosts. */
  appDomain: string;
}

/** Why a normalized name cannot be claimed, or null when it can. */
export function domainProblem(domain: string, reserved: ReservedNames): string | null {
  if (domain.length === 0) return 'must not be empty';
  if (domain.length > MAX_DOMAIN_LENGTH) return `must be at most ${MAX_DOMAIN_LENGTH} characters, so that ${CHALLENGE_LABEL}.<domain> is still a valid name`;
  if (isIP(domain) !== 0 || isIP(domain.replace(/^\[|\]$/g, '')) !== 0) return 'must be a domain name, not an IP address';
  const labels = domain.split('.');
  if (labels.length < 2) return 'must be a fully qualified domain name with at least two labels, such as app.example.com';
  const bad = labels.find((label) => !HOST_NAME_LABEL.test(label));
  if (bad !== undefined) {
    return bad === ''
      ? 'must not have empty labels (two dots in a row, or a leading dot)'
      : `has an invalid label "${bad.slice(0, 70)}": labels are 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen (write internationalized names in their xn-- form)`;
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return 'must end in a top-level domain, not a number';
  if (reserved.apiHosts.includes(domain)) return "is this server's own host name";
  if (domain === reserved.appDomain || domain.endsWith(`.${reserved.appDomain}`))
    return `is under SANDBOXD_APP_DOMAIN (${reserved.appDomain}), whose names serve VM previews`;
  return null;
}
