/**
 * Egress policies: what a VM may reach outside itself. A policy is data (`EgressPolicy`); the decisions made on
 * it (`allowsName`, `allowsAddress`, …) live here so that the DNS resolver, the HTTP/HTTPS proxy and the
 * firewall rules all apply the same rules. The host's guard (no loopback, no private ranges) holds under every
 * policy: a policy only ever narrows what a guest reaches.
 *
 * Names are matched on what the guest asked for (its DNS question, the TLS SNI, the HTTP Host), addresses and
 * ports on the packet. `allowed_domains` entries are exact names (`a.test`), suffix wildcards (`*.a.test`:
 * the subdomains, not `a.test` itself) or `*` (every name). `allowed_cidrs` are IPv4 CIDRs (`0.0.0.0/0`: every
 * public address).
 */
import { BlockList, isIPv4 } from 'node:net';
import { PACKAGE_MANAGER_DOMAINS } from './egress-package-managers.ts';
import { AppError } from './errors.ts';

export interface EgressPolicy {
  /** The registries of `PACKAGE_MANAGER_DOMAINS` (Debian, PyPI, npm), over HTTP and HTTPS. */
  allowPackageManagers: boolean;
  /** Port 80 at all (to an allowed name or CIDR). */
  allowHttp: boolean;
  /** Port 443 at all (to an allowed name or CIDR). */
  allowHttps: boolean;
  allowedDomains: string[];
  allowedCidrs: string[];
}

/** Today's behaviour: every public destination (the host guard still refuses loopback and private ranges). */
export const OPEN_EGRESS_POLICY: EgressPolicy = Object.freeze({
  allowPackageManagers: true,
  allowHttp: true,
  allowHttps: true,
  allowedDomains: ['*'],
  allowedCidrs: ['0.0.0.0/0'],
}) as EgressPolicy;

export const MAX_EGRESS_DOMAINS = 200;
export const MAX_EGRESS_CIDRS = 200;

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** A domain entry in canonical form (lower case, no trailing dot), or an `AppError('BAD_REQUEST')`. */
export function normalizeDomainPattern(entry: string): string {
  const trimmed = entry.trim().toLowerCase();
  if (trimmed === '*') return trimmed;
  // A trailing dot (a fully qualified name) is dropped after the check for `*`: `*.` is not `*`.
  const value = trimmed.replace(/\.$/, '');
  const name = value.startsWith('*.') ? value.slice(2) : value;
  const labels = name.split('.');
  if (name.length === 0 || name.length > 253 || isIPv4(name) || !labels.every((label) => LABEL.test(label))) {
    throw new AppError('BAD_REQUEST', `allowed_domains: ${JSON.stringify(entry)} is not a domain name, "*.domain" or "*" (use allowed_cidrs for addresses)`);
  }
  return value;
}

/** An IPv4 CIDR in canonical form (a bare address becomes /32), or an `AppError('BAD_REQUEST')`. */
export function normalizeCidr(entry: string): string {
  const [address, bitsText, ...rest] = entry.trim().split('/');
  const bits = bitsText === undefined ? 32 : Number(bitsText);
  if (rest.length > 0 || !address || !isIPv4(address) || !Number.isInteger(bits) || bits < 0 || bits > 32 || (bitsText !== undefined && !/^\d{1,2}$/.test(bitsText))) {
    throw new AppError('BAD_REQUEST', `allowed_cidrs: ${JSON.stringify(entry)} is not an IPv4 address or CIDR (e.g. 203.0.113.0/24)`);
  }
  // The network address of the prefix: nft refuses host bits that are set.
  const value = address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const size = 2 ** (32 - bits);
  const network = Math.floor(value / size) * size;
  return `${[24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join('.')}/${bits}`;
}

/** A policy with canonical, de-duplicated lists; throws `AppError('BAD_REQUEST')` on a bad entry. */
export function normalizeEgressPolicy(policy: EgressPolicy): EgressPolicy {
  if (policy.allowedDomains.length > MAX_EGRESS_DOMAINS) throw new AppError('BAD_REQUEST', `allowed_domains: at most ${MAX_EGRESS_DOMAINS} entries`);
  if (policy.allowedCidrs.length > MAX_EGRESS_CIDRS) throw new AppError('BAD_REQUEST', `allowed_cidrs: at most ${MAX_EGRESS_CIDRS} entries`);
  return {
    allowPackageManagers: policy.allowPackageManagers,
    allowHttp: policy.allowHttp,
    allowHttps: policy.allowHttps,
    allowedDomains: [...new Set(policy.allowedDomains.map(normalizeDomainPattern))],
    allowedCidrs: [...new Set(policy.allowedCidrs.map(normalizeCidr))],
  };
}

/**
 * True when the policy allows everything the host guard allows, so no per-VM enforcement is needed: the VM
 * keeps today's path (no redirection, no proxy), at no cost.
 */
export function isOpenEgressPolicy(policy: EgressPolicy): boolean {
  return policy.allowHttp && policy.allowHttps && policy.allowedDomains.includes('*') && policy.allowedCidrs.includes('0.0.0.0/0');
}

/** Whether a canonical name matches one `allowed_domains`-style pattern (exact, `*.suffix`, or `*`). */
export function matchesDomainPattern(name: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1));
  return name === pattern;
}

/** Whether the guest may resolve and reach `name` (a DNS question, an SNI or a Host, any case, maybe with a trailing dot). */
export function allowsName(policy: EgressPolicy, name: string): boolean {
  const value = name.toLowerCase().replace(/\.$/, '');
  if (policy.allowedDomains.some((pattern) => matchesDomainPattern(value, pattern))) return true;
  return policy.allowPackageManagers && PACKAGE_MANAGER_DOMAINS.some(({ domain }) => value === domain || value.endsWith(`.${domain}`));
}

/** Whether `address` (IPv4) is inside one of the policy's CIDRs. */
export function allowsAddress(policy: EgressPolicy, address: string): boolean {
  if (!isIPv4(address)) return false;
  const list = new BlockList();
  for (const cidr of policy.allowedCidrs) {
    const [network, bits] = cidr.split('/') as [string, string];
    list.addSubnet(network, Number(bits), 'ipv4');
  }
  return list.check(address, 'ipv4');
}

/** Whether the scheme's port is open at all under the policy. */
export function allowsScheme(policy: EgressPolicy, scheme: 'http' | 'https'): boolean {
  return scheme === 'http' ? policy.allowHttp : policy.allowHttps;
}
