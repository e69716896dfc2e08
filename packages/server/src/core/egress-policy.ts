/**
 * Egress policies: what a VM may reach outside itself. A policy is data (`EgressPolicy`); the decisions made on
 * it (`allowsName`, `allowsAddress`, …) live here so that the DNS resolver, the HTTP/HTTPS proxy and the
 * firewall rules all apply the same rules. The host's guard (no loopback, no private ranges) holds under every
 * policy: a policy only ever narrows what a guest reaches.
 *
 * Names are matched on what the guest asked for (its DNS question, the TLS SNI, the HTTP Host), addresses and
 * ports on the packet. `allowed_domains` entries are exact names (`a.test`), suffix wildcards (`*.a.test`:
 * the subdomains, not `a.test` itself) or `*` (every name). An allowed name gives HTTP and HTTPS through the
 * proxy (which checks the name of every request or TLS connection) and nothing else: its addresses are shared
 * with other names on CDNs and front ends, so another port or protocol to them would reach any tenant there.
 * `allowed_ports` (`22/tcp`, `443/udp`) opens more ports on the addresses the VM's own DNS answers gave for
 * allowed names. `allowed_cidrs` are explicit address grants: IPv4 CIDRs (`0.0.0.0/0`: every public address),
 * open on every port.
 */
import { BlockList, isIPv4 } from 'node:net';
import { canonicalHostName, matchesHostPattern, normalizeHostPattern } from '../contract/host-patterns.ts';
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
  /**
   * Ports besides HTTP and HTTPS the addresses of allowed names are open on, `<port>/<tcp|udp>` (canonical:
   * ascending, tcp before udp). UDP/443 (QUIC) only when named here: there is no proxy for it.
   */
  allowedPorts: string[];
}

/** Where a VM's policy came from: its own, its session's when it started, or the deployment's default. */
export type EgressPolicySource = 'vm' | 'session' | 'default';

/** A VM's policy as the API shows it. */
export interface EgressPolicyView {
  policy: EgressPolicy;
  source: EgressPolicySource;
  /** Whether the host enforces it on the VM now (a restricted policy on a running VM of this node). */
  enforced: boolean;
}

/** A policy as given (a request, a setting, a stored record older than `allowed_ports`): `allowedPorts` may be absent. */
export type EgressPolicyInput = Omit<EgressPolicy, 'allowedPorts'> & { allowedPorts?: string[] | undefined };

/** Today's behaviour: every public destination (the host guard still refuses loopback and private ranges). */
export const OPEN_EGRESS_POLICY: EgressPolicy = Object.freeze({
  allowPackageManagers: true,
  allowHttp: true,
  allowHttps: true,
  allowedDomains: ['*'],
  allowedCidrs: ['0.0.0.0/0'],
  allowedPorts: [],
}) as EgressPolicy;

export const MAX_EGRESS_DOMAINS = 200;
export const MAX_EGRESS_CIDRS = 200;
export const MAX_EGRESS_PORTS = 50;

/** A domain entry in canonical form (lower case, no trailing dot; `contract/host-patterns.ts`), or an `AppError('BAD_REQUEST')`. */
export function normalizeDomainPattern(entry: string): string {
  try {
    return normalizeHostPattern(entry, { everyHost: true });
  } catch {
    throw new AppError('BAD_REQUEST', `allowed_domains: ${JSON.stringify(entry)} is not a domain name, "*.domain" or "*" (use allowed_cidrs for addresses)`);
  }
}

/** An IPv4 CIDR in canonical form (a bare address becomes /32), or an `AppError('BAD_REQUEST')`. */
export function normalizeCidr(entry: string): string {
  const [address, bitsText, ...rest] = entry.trim().split('/');
  const bits = bitsText === undefined ? 32 : Number(bitsText);
  if (
    rest.length > 0 ||
    !address ||
    !isIPv4(address) ||
    !Number.isInteger(bits) ||
    bits < 0 ||
    bits > 32 ||
    (bitsText !== undefined && !/^\d{1,2}$/.test(bitsText))
  ) {
    throw new AppError('BAD_REQUEST', `allowed_cidrs: ${JSON.stringify(entry)} is not an IPv4 address or CIDR (e.g. 203.0.113.0/24)`);
  }
  // The network address of the prefix: nft refuses host bits that are set.
  const value = address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const size = 2 ** (32 - bits);
  const network = Math.floor(value / size) * size;
  return `${[24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join('.')}/${bits}`;
}

/** One `allowed_ports` entry, `<port>/<tcp|udp>`, parsed. */
export interface EgressPort {
  port: number;
  protocol: 'tcp' | 'udp';
}

/**
 * An `allowed_ports` entry in canonical form (`22/tcp`), or an `AppError('BAD_REQUEST')`. TCP 80 and 443 always go
 * through the proxy (`allow_http`, `allow_https`) and port 53 to the VM's resolver, so naming them is an error.
 */
export function normalizePortEntry(entry: string): string {
  const match = /^\s*(\d{1,5})\s*\/\s*(tcp|udp)\s*$/i.exec(entry);
  const port = match ? Number(match[1]) : 0;
  if (!match || port < 1 || port > 65535)
    throw new AppError('BAD_REQUEST', `allowed_ports: ${JSON.stringify(entry)} is not "<port>/tcp" or "<port>/udp" (e.g. "22/tcp", "443/udp")`);
  const protocol = match[2]!.toLowerCase();
  if (port === 53) throw new AppError('BAD_REQUEST', `allowed_ports: ${JSON.stringify(entry)}: DNS always goes to the VM's policy resolver`);
  if (protocol === 'tcp' && (port === 80 || port === 443)) {
    throw new AppError(
      'BAD_REQUEST',
      `allowed_ports: ${JSON.stringify(entry)}: TCP ${port} always goes through the egress proxy (allow_${port === 80 ? 'http' : 'https'})`,
    );
  }
  return `${port}/${protocol}`;
}

/** The parsed entries of a canonical `allowed_ports` list. */
export function parsePorts(entries: readonly string[]): EgressPort[] {
  return entries.map((entry) => {
    const [port, protocol] = entry.split('/') as [string, 'tcp' | 'udp'];
    return { port: Number(port), protocol };
  });
}

/** A policy with canonical, de-duplicated lists; throws `AppError('BAD_REQUEST')` on a bad entry. */
export function normalizeEgressPolicy(policy: EgressPolicyInput): EgressPolicy {
  const ports = policy.allowedPorts ?? [];
  if (policy.allowedDomains.length > MAX_EGRESS_DOMAINS) throw new AppError('BAD_REQUEST', `allowed_domains: at most ${MAX_EGRESS_DOMAINS} entries`);
  if (policy.allowedCidrs.length > MAX_EGRESS_CIDRS) throw new AppError('BAD_REQUEST', `allowed_cidrs: at most ${MAX_EGRESS_CIDRS} entries`);
  if (ports.length > MAX_EGRESS_PORTS) throw new AppError('BAD_REQUEST', `allowed_ports: at most ${MAX_EGRESS_PORTS} entries`);
  const canonicalPorts = parsePorts([...new Set(ports.map(normalizePortEntry))])
    .sort((a, b) => a.protocol.localeCompare(b.protocol) || a.port - b.port)
    .map(({ port, protocol }) => `${port}/${protocol}`);
  return {
    allowPackageManagers: policy.allowPackageManagers,
    allowHttp: policy.allowHttp,
    allowHttps: policy.allowHttps,
    allowedDomains: [...new Set(policy.allowedDomains.map(normalizeDomainPattern))],
    allowedCidrs: [...new Set(policy.allowedCidrs.map(normalizeCidr))],
    allowedPorts: canonicalPorts,
  };
}

/**
 * A policy read back from the store or another node: records written before `allowed_ports` existed have none
 * (an allowed name then meant every port; it now means HTTP and HTTPS, which is what the README promised).
 */
export function storedEgressPolicy(json: string): EgressPolicy {
  const value = JSON.parse(json) as EgressPolicyInput;
  return { ...value, allowedPorts: value.allowedPorts ?? [] };
}

/**
 * True when the policy allows everything the host guard allows, so no per-VM enforcement is needed: the VM
 * keeps today's path (no redirection, no proxy), at no cost.
 */
export function isOpenEgressPolicy(policy: EgressPolicy): boolean {
  return policy.allowHttp && policy.allowHttps && policy.allowedDomains.includes('*') && policy.allowedCidrs.includes('0.0.0.0/0');
}

/** Whether the guest may resolve and reach `name` (a DNS question, an SNI or a Host, any case, maybe with a trailing dot). */
export function allowsName(policy: EgressPolicy, name: string): boolean {
  const value = canonicalHostName(name);
  if (policy.allowedDomains.some((pattern) => matchesHostPattern(value, pattern))) return true;
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
