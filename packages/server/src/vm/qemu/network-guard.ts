/**
 * The network guard: QEMU's user-mode network turns a guest's connection to 10.0.2.2 into a connection from
 * the QEMU process to the host's 127.0.0.1, and any guest connection into one from the host. Without a guard
 * a guest reaches the sandboxd API, a database on loopback, the cloud metadata service or the LAN.
 *
 * QEMU runs as a dedicated user (`vm-user.ts`); an nftables table drops (rejects, so guests fail fast) that
 * user's traffic to the host itself (anything routed via `lo`: 127/8, ::1 and the host's own addresses) and
 * to private, link-local and multicast ranges. DNS to the host's resolvers stays allowed (slirp forwards the
 * guest's DNS to them, and they are often on a private address). Public destinations stay reachable.
 * A VM under a restricted egress policy (`net/egress/`) is narrowed further by a table of its own.
 *
 * The guard fails closed: a VM with user networking does not start while it is not active (`assertGuarded`),
 * and `NetworkGuardMonitor` re-checks it periodically, re-installing a table a firewall reload flushed.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { EGRESS_REDIRECT_MARK } from '../../host/firewall-marks.ts';
import { runProgram } from '../../host/run-program.ts';

/** The nftables table the guard owns (inet: IPv4 and IPv6). Nothing else of the host's ruleset is touched. */
export const GUARD_TABLE = 'sandboxd_guard';

/** Destinations blocked by default besides the host itself. */
export const DEFAULT_BLOCKED_IPV4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '224.0.0.0/3',
];
export const DEFAULT_BLOCKED_IPV6 = ['::1/128', 'fc00::/7', 'fe80::/10', 'ff00::/8'];

export interface NetworkGuardOptions {
  /** The uid QEMU runs as. */
  uid: number;
  /** Resolvers guests may query on port 53 (default: the nameservers of /etc/resolv.conf). */
  dnsServers?: string[];
  blockedIpv4?: string[];
  blockedIpv6?: string[];
  nftBinary?: string;
  /** The table's name (default `GUARD_TABLE`; tests use their own). */
  table?: string;
}

export interface NetworkGuardStatus {
  active: boolean;
  /** What is enforced, or why not. */
  detail: string;
}

/** The nameservers of /etc/resolv.conf (what slirp forwards guest DNS to). */
export async function hostDnsServers(path = '/etc/resolv.conf'): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([keyword, address]) => keyword === 'nameserver' && address && isIP(address.replace(/%.*$/, '')))
    .map(([, address]) => address!.replace(/%.*$/, ''));
}

/** The ruleset, as `nft -f` input that atomically replaces the guard's table (idempotent). */
export function guardRuleset(options: Required<Pick<NetworkGuardOptions, 'uid' | 'dnsServers' | 'blockedIpv4' | 'blockedIpv6'>> & { table?: string }): string {
  const table = options.table ?? GUARD_TABLE;
  if (!/^\w+$/.test(table)) throw new Error(`bad table name ${JSON.stringify(table)}`);
  for (const cidr of [...options.dnsServers, ...options.blockedIpv4, ...options.blockedIpv6]) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(cidr)) throw new Error(`not an address or CIDR: ${JSON.stringify(cidr)}`);
  }
  if (!Number.isInteger(options.uid) || options.uid <= 0) throw new Error(`the guard needs an unprivileged uid, got ${options.uid}`);
  const dns4 = options.dnsServers.filter((a) => isIP(a) === 4);
  const dns6 = options.dnsServers.filter((a) => isIP(a) === 6);
  const lines = [
    `table inet ${table}`,
    `delete table inet ${table}`,
    `table inet ${table} {`,
    '  chain output {',
    '    type filter hook output priority filter; policy accept;',
    `    meta skuid ${options.uid} jump vm_egress`,
    '  }',
    '  chain vm_egress {',
    // What a VM's egress policy redirected to its resolver or proxy on the host's loopback (only the egress
    // table, `net/egress/ruleset.ts`, sets this mark; those listeners apply the same guard themselves).
    `    ct mark ${EGRESS_REDIRECT_MARK} accept`,
    ...(dns4.length ? [`    ip daddr { ${dns4.join(', ')} } meta l4proto { tcp, udp } th dport 53 accept`] : []),
    ...(dns6.length ? [`    ip6 daddr { ${dns6.join(', ')} } meta l4proto { tcp, udp } th dport 53 accept`] : []),
    // Every destination that is the host itself is routed through lo, whatever its address.
    '    oifname "lo" jump deny',
    ...(options.blockedIpv4.length ? [`    ip daddr { ${options.blockedIpv4.join(', ')} } jump deny`] : []),
    ...(options.blockedIpv6.length ? [`    ip6 daddr { ${options.blockedIpv6.join(', ')} } jump deny`] : []),
    '  }',
    '  chain deny {',
    '    counter',
    // A reset or an ICMP error makes the guest's connect fail at once instead of timing out.
    '    meta l4proto tcp reject with tcp reset',
    '    reject with icmpx admin-prohibited',
    '  }',
    '}',
  ];
  return `${lines.join('\n')}\n`;
}

/** Installs (or replaces) the guard for `uid`; resolves with its status, never throws. */
export async function installNetworkGuard(options: NetworkGuardOptions): Promise<NetworkGuardStatus> {
  const nft = options.nftBinary ?? 'nft';
  let ruleset: string;
  try {
    ruleset = guardRuleset({
      uid: options.uid,
      dnsServers: options.dnsServers ?? (await hostDnsServers()),
      blockedIpv4: options.blockedIpv4 ?? DEFAULT_BLOCKED_IPV4,
      blockedIpv6: options.blockedIpv6 ?? DEFAULT_BLOCKED_IPV6,
      ...(options.table ? { table: options.table } : {}),
    });
    await runProgram(nft, ['-f', '-'], { input: ruleset });
  } catch (error) {
    return { active: false, detail: `could not install the nftables guard: ${(error as Error).message}` };
  }
  return networkGuardStatus(options.uid, nft, options.table);
}

/** Whether the guard's table is loaded and matches `uid`. */
export async function networkGuardStatus(uid: number, nft = 'nft', table = GUARD_TABLE): Promise<NetworkGuardStatus> {
  try {
    const { stdout } = await runProgram(nft, ['-n', 'list', 'table', 'inet', table]);
    if (!stdout.includes(`meta skuid ${uid} jump vm_egress`))
      return { active: false, detail: `nftables table inet ${table} exists but does not match uid ${uid}` };
    return { active: true, detail: `nftables table inet ${table} rejects uid ${uid}'s traffic to the host and to private ranges` };
  } catch (error) {
    return { active: false, detail: `nftables table inet ${table} is not loaded: ${(error as Error).message}` };
  }
}

/**
 * Keeps the guard's status current while the driver runs: re-checks it every `intervalMs` (the table can vanish
 * under a running server: `nft flush ruleset`, a firewall service reloading its own rules) and re-installs it
 * when it is gone. `onChange` hears every change of `active`.
 */
export class NetworkGuardMonitor {
  private current: NetworkGuardStatus;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<NetworkGuardStatus> | null = null;

  constructor(
    private readonly options: NetworkGuardOptions,
    initial: NetworkGuardStatus,
    private readonly onChange: (status: NetworkGuardStatus) => void = () => undefined,
    private readonly intervalMs = 10_000,
  ) {
    this.current = initial;
  }

  /** The status found by the last check. */
  get status(): NetworkGuardStatus {
    return this.current;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Checks the table now, re-installing it when it is gone; resolves with the status after that. */
  check(): Promise<NetworkGuardStatus> {
    this.checking ??= (async () => {
      let status = await networkGuardStatus(this.options.uid, this.options.nftBinary, this.options.table);
      if (!status.active) status = await installNetworkGuard(this.options);
      if (status.active !== this.current.active) this.onChange(status);
      this.current = status;
      return status;
    })().finally(() => (this.checking = null));
    return this.checking;
  }
}

/** Removes the guard's table (tests; an operator uninstalling sandboxd). */
export async function removeNetworkGuard(nft = 'nft'): Promise<void> {
  await runProgram(nft, ['delete', 'table', 'inet', GUARD_TABLE]).catch(() => undefined);
}
