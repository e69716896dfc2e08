/**
 * The network guard of template pulls (issue 31, M-6). skopeo fetches what a user names, follows the registry's
 * redirects and resolves the names they carry, so it runs as a user of its own (`sandboxd-pull`) whose every
 * connection passes an nftables table like the VMs' guard (`vm/qemu/network-guard.ts`): nothing routed through
 * `lo` (the host itself, whatever its address), nothing in private, link-local, metadata or multicast ranges —
 * whatever a redirect or a second DNS answer says. DNS to the host's resolvers stays open (blob downloads go to
 * names of their own, CDNs for the big registries).
 *
 * The one exception is a registry the operator trusts (`SANDBOXD_TEMPLATE_INSECURE_REGISTRIES`, or any registry
 * under `SANDBOXD_TEMPLATE_REGISTRY_ALLOW_PRIVATE`): the addresses its name was checked at, on its port only,
 * are let through for the time of a pull (`allowDestinations`), as elements of the table's sets. A redirect
 * from it to another port or address is refused like any other.
 *
 * The table is replaced rule by rule and never deleted (`add` statements, then `flush chain` and the rules, in one
 * atomic `nft -f`), so installing it again (every pull does: a firewall reload may have flushed it) keeps the
 * allowances of pulls in flight, here or in another server process on the host.
 */
import { isIP } from 'node:net';
import { DEFAULT_BLOCKED_IPV4, DEFAULT_BLOCKED_IPV6, hostDnsServers } from '../../vm/qemu/network-guard.ts';
import { runProgram } from '../../host/run-program.ts';
import { ensureVmUser, type SystemUser } from '../../vm/qemu/vm-user.ts';

/** The nftables table of the pull guard (inet: IPv4 and IPv6). */
export const PULL_GUARD_TABLE = 'sandboxd_pull_guard';
/** The system user skopeo runs as. */
export const PULL_USER = 'sandboxd-pull';
/**
 * An allowance outlives a pull that never ended (the server was killed mid-pull) by at most this long. It must
 * outlast the longest pull: the layer lock's own default timeout is 30 minutes.
 */
const ALLOWANCE_TIMEOUT = '6h';

/** One destination a trusted registry is reached at. */
export interface PullDestination {
  address: string;
  port: number;
}

/** The rules, as `nft -f` input that (re)installs the table and keeps its sets' elements. */
export function pullGuardRuleset(options: { uid: number; dnsServers: string[]; blockedIpv4: readonly string[]; blockedIpv6: readonly string[] }): string {
  for (const cidr of [...options.dnsServers, ...options.blockedIpv4, ...options.blockedIpv6]) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(cidr)) throw new Error(`not an address or CIDR: ${JSON.stringify(cidr)}`);
  }
  if (!Number.isInteger(options.uid) || options.uid <= 0) throw new Error(`the pull guard needs an unprivileged uid, got ${options.uid}`);
  const t = `inet ${PULL_GUARD_TABLE}`;
  const dns4 = options.dnsServers.filter((address) => isIP(address) === 4);
  const dns6 = options.dnsServers.filter((address) => isIP(address) === 6);
  const lines = [
    `add table ${t}`,
    `add set ${t} allowed4 { type ipv4_addr . inet_service; flags timeout; }`,
    `add set ${t} allowed6 { type ipv6_addr . inet_service; flags timeout; }`,
    `add chain ${t} output { type filter hook output priority filter; policy accept; }`,
    `add chain ${t} pull_egress`,
    `add chain ${t} deny`,
    `flush chain ${t} output`,
    `flush chain ${t} pull_egress`,
    `flush chain ${t} deny`,
    `add rule ${t} output meta skuid ${options.uid} jump pull_egress`,
    `add rule ${t} pull_egress ip daddr . tcp dport @allowed4 accept`,
    `add rule ${t} pull_egress ip6 daddr . tcp dport @allowed6 accept`,
    ...(dns4.length ? [`add rule ${t} pull_egress ip daddr { ${dns4.join(', ')} } meta l4proto { tcp, udp } th dport 53 accept`] : []),
    ...(dns6.length ? [`add rule ${t} pull_egress ip6 daddr { ${dns6.join(', ')} } meta l4proto { tcp, udp } th dport 53 accept`] : []),
    // Every destination that is the host itself is routed through lo, whatever its address.
    `add rule ${t} pull_egress oifname "lo" jump deny`,
    ...(options.blockedIpv4.length ? [`add rule ${t} pull_egress ip daddr { ${options.blockedIpv4.join(', ')} } jump deny`] : []),
    ...(options.blockedIpv6.length ? [`add rule ${t} pull_egress ip6 daddr { ${options.blockedIpv6.join(', ')} } jump deny`] : []),
    `add rule ${t} deny counter`,
    // A reset makes skopeo's connect fail at once, with "connection refused" in its message.
    `add rule ${t} deny meta l4proto tcp reject with tcp reset`,
    `add rule ${t} deny reject with icmpx admin-prohibited`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The `nft` element of a destination in its family's set. */
function element(destination: PullDestination): { set: 'allowed4' | 'allowed6'; key: string } {
  const family = isIP(destination.address);
  if (family === 0 || !Number.isInteger(destination.port) || destination.port < 1 || destination.port > 65_535) {
    throw new Error(`not an address and port: ${JSON.stringify(destination)}`);
  }
  return { set: family === 4 ? 'allowed4' : 'allowed6', key: `${destination.address} . ${destination.port}` };
}

/**
 * The guard of this process's pulls: the pull user, created on first use, and the table, installed again before
 * every pull. Allowances are counted, so two pulls from one registry share its elements until the last ends.
 */
export class PullGuard {
  private user: Promise<SystemUser> | null = null;
  private readonly allowances = new Map<string, number>();

  constructor(private readonly nft = 'nft') {}

  /**
   * Installs the table (again) and lets `destinations` through until the returned release is called. Resolves
   * with the user skopeo must run as. Rejects when the guard cannot be installed: a pull never runs unguarded.
   */
  async enter(destinations: readonly PullDestination[]): Promise<{ user: SystemUser; release: () => Promise<void> }> {
    this.user ??= ensureVmUser(PULL_USER, 'sandboxd template pulls');
    const user = await this.user.catch((error: unknown) => {
      this.user = null;
      throw error;
    });
    const elements = destinations.map(element);
    const ruleset = pullGuardRuleset({
      uid: user.uid,
      dnsServers: await hostDnsServers(),
      blockedIpv4: DEFAULT_BLOCKED_IPV4,
      blockedIpv6: DEFAULT_BLOCKED_IPV6,
    });
    const adds = elements.map(({ set, key }) => `add element inet ${PULL_GUARD_TABLE} ${set} { ${key} timeout ${ALLOWANCE_TIMEOUT} }`);
    await runProgram(this.nft, ['-f', '-'], { input: `${ruleset}${adds.join('\n')}\n` });
    for (const { set, key } of elements) this.allowances.set(`${set} ${key}`, (this.allowances.get(`${set} ${key}`) ?? 0) + 1);
    let released = false;
    return {
      user,
      release: async () => {
        if (released) return;
        released = true;
        const gone: string[] = [];
        for (const { set, key } of elements) {
          const left = (this.allowances.get(`${set} ${key}`) ?? 1) - 1;
          if (left > 0) this.allowances.set(`${set} ${key}`, left);
          else {
            this.allowances.delete(`${set} ${key}`);
            gone.push(`delete element inet ${PULL_GUARD_TABLE} ${set} { ${key} }`);
          }
        }
        // An element already gone (the table was flushed meanwhile) makes nft fail: nothing is left to remove.
        for (const statement of gone) await runProgram(this.nft, ['-f', '-'], { input: `${statement}\n` }).catch(() => undefined);
      },
    };
  }
}

/** The guard every pull of this process goes through. */
export const pullGuard = new PullGuard();
