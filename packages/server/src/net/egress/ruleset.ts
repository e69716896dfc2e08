/**
 * The nftables side of egress policies: one table per server node (`egressTableName`), holding per VM a NAT chain (DNS,
 * HTTP and HTTPS redirected to that VM's resolver and proxy ports on the host's loopback), a filter chain
 * (everything else only to its CIDRs, or to the addresses its DNS answers pinned on the ports its policy names in
 * `allowed_ports`) and two sets. A pinned address is no grant by itself: it may be a CDN's, shared with any
 * other name, so without `allowed_ports` it is reached only through the proxy, which checks the name. A VM's QEMU is
 * recognised by its cgroup v2 (`socket cgroupv2`), which the guest cannot change: the rules see QEMU's own
 * sockets, i.e. what slirp sends for the guest, wherever the guest sends it.
 *
 * Every change is one `nft -f` transaction, so a policy swap is atomic: no packet sees half a policy.
 */
import { createHash } from 'node:crypto';
import type { EgressPort } from '../../core/egress-policy.ts';
import { EGRESS_REDIRECT_MARK } from '../../host/firewall-marks.ts';
import { runProgram } from '../../host/run-program.ts';

/**
 * The table's name: one table per server node (`sandboxd_egress_<8 hex of the node id>`), so that two server
 * processes on one host (tests, a cluster node restarting beside another) never rebuild or reap each other's.
 */
export const EGRESS_TABLE_PREFIX = 'sandboxd_egress';

export function egressTableName(nodeId: string): string {
  return `${EGRESS_TABLE_PREFIX}_${createHash('sha256').update(nodeId).digest('hex').slice(0, 8)}`;
}

/** How the firewall recognises one VM's QEMU: its cgroup in the v2 hierarchy. */
export interface EgressClassifier {
  /** The cgroup directory relative to /sys/fs/cgroup (nft resolves it there), e.g. `unified/sandboxd/vm-1`. */
  cgroupPath: string;
  /** Its depth below the cgroup v2 root (`socket cgroupv2 level`). */
  level: number;
}

/** The host-side ports a VM's traffic is redirected to. */
export interface EgressPorts {
  dnsUdp: number;
  dnsTcp: number;
  http: number;
  https: number;
}

/** What one VM's rules are made of. */
export interface VmRules {
  /** Identifier-safe key of the VM (letters, digits, '_'). */
  key: string;
  classifier: EgressClassifier;
  ports: EgressPorts;
  allowHttp: boolean;
  allowHttps: boolean;
  /** Canonical IPv4 CIDRs. */
  cidrs: string[];
  /** Ports open on pinned addresses (`allowed_ports`); none: pins need no firewall element at all. */
  openPorts: EgressPort[];
  /** Addresses pinned by DNS answers, with their remaining lifetime in seconds (only needed with `openPorts`). */
  pinned: { address: string; ttlSeconds: number }[];
}

/** The nft name of a key: chains and sets are `<kind>_<key>`. */
export function ruleKey(vmId: string): string {
  return vmId.replace(/[^A-Za-z0-9]/g, '_').slice(0, 200);
}

function check(rules: VmRules): void {
  if (!/^[A-Za-z0-9_]+$/.test(rules.key)) throw new Error(`bad rule key ${JSON.stringify(rules.key)}`);
  if (!/^[A-Za-z0-9_./-]+$/.test(rules.classifier.cgroupPath) || rules.classifier.cgroupPath.split('/').includes('..')) {
    throw new Error(`bad cgroup path ${JSON.stringify(rules.classifier.cgroupPath)}`);
  }
  if (!Number.isInteger(rules.classifier.level) || rules.classifier.level < 1) throw new Error(`bad cgroup level ${rules.classifier.level}`);
  for (const port of Object.values(rules.ports)) if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`bad port ${port}`);
  for (const cidr of rules.cidrs) if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(cidr)) throw new Error(`bad CIDR ${cidr}`);
  for (const { port, protocol } of rules.openPorts)
    if (!Number.isInteger(port) || port < 1 || port > 65535 || (protocol !== 'tcp' && protocol !== 'udp')) throw new Error(`bad port ${port}/${protocol}`);
  for (const { address } of rules.pinned) if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) throw new Error(`bad address ${address}`);
}

const match = (c: EgressClassifier) => `socket cgroupv2 level ${c.level} "${c.cgroupPath}"`;
const inet = (table: string) => {
  if (!/^\w+$/.test(table)) throw new Error(`bad table name ${JSON.stringify(table)}`);
  return `inet ${table}`;
};

/**
 * The table with its two base chains, created if missing and otherwise left as it is: the VMs an earlier
 * process restricted stay restricted (their redirects fail closed while no resolver or proxy listens) until
 * this process re-applies their policies and reaps the rest (`reapScript`).
 */
export function ensureTableScript(table: string): string {
  const T = inet(table);
  return [
    `table ${T} {`,
    // dstnat priority: before the routing decision of a locally generated packet is redone.
    '  chain nat_output { type nat hook output priority -100; policy accept; }',
    '  chain filter_output { type filter hook output priority filter; policy accept; }',
    '}',
    '',
  ].join('\n');
}

/** The per-VM chains and sets of `rules` (created or replaced), then the base chains' jumps for `all` VMs. */
export function applyScript(table: string, rules: VmRules, all: Pick<VmRules, 'key' | 'classifier'>[]): string {
  check(rules);
  const T = inet(table);
  const k = rules.key;
  const mark = `ct mark set ${EGRESS_REDIRECT_MARK}`;
  const tcp = rules.openPorts.filter((p) => p.protocol === 'tcp').map((p) => p.port);
  const udp = rules.openPorts.filter((p) => p.protocol === 'udp').map((p) => p.port);
  const lines = [
    `add chain ${T} n_${k}`,
    `flush chain ${T} n_${k}`,
    `add chain ${T} f_${k}`,
    `flush chain ${T} f_${k}`,
    `add set ${T} p_${k} { type ipv4_addr; flags timeout; }`,
    `flush set ${T} p_${k}`,
    `add set ${T} c_${k} { type ipv4_addr; flags interval; auto-merge; }`,
    `flush set ${T} c_${k}`,
    ...(rules.cidrs.length ? [`add element ${T} c_${k} { ${rules.cidrs.join(', ')} }`] : []),
    ...(rules.pinned.length
      ? [`add element ${T} p_${k} { ${rules.pinned.map((p) => `${p.address} timeout ${Math.max(1, Math.round(p.ttlSeconds))}s`).join(', ')} }`]
      : []),
    // Every DNS query, to slirp's 10.0.2.3 or to any server the guest names, goes to the VM's resolver.
    `add rule ${T} n_${k} udp dport 53 ${mark} redirect to :${rules.ports.dnsUdp}`,
    `add rule ${T} n_${k} tcp dport 53 ${mark} redirect to :${rules.ports.dnsTcp}`,
    ...(rules.allowHttp ? [`add rule ${T} n_${k} tcp dport 80 ${mark} redirect to :${rules.ports.http}`] : []),
    ...(rules.allowHttps ? [`add rule ${T} n_${k} tcp dport 443 ${mark} redirect to :${rules.ports.https}`] : []),
    `add rule ${T} f_${k} ct mark ${EGRESS_REDIRECT_MARK} accept`,
    `add rule ${T} f_${k} ct state established,related accept`,
    // Guests have no IPv6 (slirp runs with ipv6=off); nothing of it leaves a restricted VM.
    `add rule ${T} f_${k} meta nfproto ipv6 reject with icmpx admin-prohibited`,
    // 80 and 443 that were not redirected: the scheme is closed by the policy.
    `add rule ${T} f_${k} tcp dport { 80, 443 } meta nftrace set 1 reject with tcp reset`,
    // QUIC has no proxy: with HTTPS closed it is closed too, also to CIDRs, unless the policy names it.
    ...(!rules.allowHttps && !udp.includes(443) ? [`add rule ${T} f_${k} udp dport 443 meta nftrace set 1 reject with icmpx admin-prohibited`] : []),
    // nftrace marks the first packet of each connection for the audit log (trace-monitor.ts). A pinned address
    // is open only on the ports the policy names: on any other, another tenant of a shared address is a SNI away.
    ...(tcp.length ? [`add rule ${T} f_${k} ip daddr @p_${k} tcp dport { ${tcp.join(', ')} } meta nftrace set 1 accept`] : []),
    ...(udp.length ? [`add rule ${T} f_${k} ip daddr @p_${k} udp dport { ${udp.join(', ')} } meta nftrace set 1 accept`] : []),
    `add rule ${T} f_${k} ip daddr @c_${k} meta nftrace set 1 accept`,
    `add rule ${T} f_${k} meta l4proto tcp meta nftrace set 1 reject with tcp reset`,
    `add rule ${T} f_${k} meta nftrace set 1 reject with icmpx admin-prohibited`,
    ...jumpLines(table, all),
  ];
  return `${lines.join('\n')}\n`;
}

function jumpLines(table: string, all: Pick<VmRules, 'key' | 'classifier'>[]): string[] {
  const T = inet(table);
  return [
    `flush chain ${T} nat_output`,
    `flush chain ${T} filter_output`,
    ...all.flatMap(({ key, classifier }) => [
      `add rule ${T} nat_output ${match(classifier)} jump n_${key}`,
      `add rule ${T} filter_output ${match(classifier)} jump f_${key}`,
    ]),
  ];
}

/** Removes a VM's chains and sets; the base chains keep the jumps of `remaining`. */
export function removeScript(table: string, key: string, remaining: Pick<VmRules, 'key' | 'classifier'>[]): string {
  const T = inet(table);
  return [
    ...jumpLines(table, remaining),
    `delete chain ${T} n_${key}`,
    `delete chain ${T} f_${key}`,
    `delete set ${T} p_${key}`,
    `delete set ${T} c_${key}`,
    '',
  ].join('\n');
}

/** Deletes the chains and sets of VMs not in `keep` (what an earlier process left for VMs that are gone). */
export async function reapLeftovers(table: string, keep: Set<string>, remaining: Pick<VmRules, 'key' | 'classifier'>[], nftBinary = 'nft'): Promise<string[]> {
  const T = inet(table);
  const listed = await runProgram(nftBinary, ['list', 'table', 'inet', table], { timeoutMs: 10_000 }).catch(() => null);
  if (!listed) return []; // no table: nothing was left
  const { stdout } = listed;
  if (remaining.length === 0) {
    // No restricted VM lives here: whatever the table holds is left over.
    await runNft(`delete table ${T}\n`, nftBinary);
    return [...new Set([...stdout.matchAll(/^\s*chain f_(\w+) \{/gm)].map((m) => m[1]!))];
  }
  const keys = new Set<string>();
  for (const match of stdout.matchAll(/^\s*(?:chain|set) ([nfpc])_(\w+) \{/gm)) if (!keep.has(match[2]!)) keys.add(match[2]!);
  if (keys.size === 0 && keep.size > 0) return [];
  const lines = jumpLines(table, remaining);
  for (const key of keys) {
    for (const kind of ['n', 'f']) if (new RegExp(`^\\s*chain ${kind}_${key} \\{`, 'm').test(stdout)) lines.push(`delete chain ${T} ${kind}_${key}`);
    for (const kind of ['p', 'c']) if (new RegExp(`^\\s*set ${kind}_${key} \\{`, 'm').test(stdout)) lines.push(`delete set ${T} ${kind}_${key}`);
  }
  await runNft(`${lines.join('\n')}\n`, nftBinary);
  return [...keys];
}

/**
 * Pins addresses a DNS answer gave (or refreshes their lifetime) and unpins `dropped` (addresses no name pins any
 * more), in one transaction.
 */
export function pinScript(table: string, key: string, pinned: { address: string; ttlSeconds: number }[], dropped: string[] = []): string {
  const T = inet(table);
  for (const address of [...pinned.map((p) => p.address), ...dropped]) if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) throw new Error(`bad address ${address}`);
  const lines: string[] = [];
  if (pinned.length) {
    // delete-then-add refreshes the timeout of an element that is already there.
    const elements = pinned.map((p) => `${p.address} timeout ${Math.max(1, Math.round(p.ttlSeconds))}s`).join(', ');
    lines.push(
      `add element ${T} p_${key} { ${elements} }`,
      `delete element ${T} p_${key} { ${pinned.map((p) => p.address).join(', ')} }`,
      `add element ${T} p_${key} { ${elements} }`,
    );
  }
  if (dropped.length) {
    // Added first so that the delete cannot fail on an element whose timeout already removed it.
    lines.push(
      `add element ${T} p_${key} { ${dropped.map((address) => `${address} timeout 1s`).join(', ')} }`,
      `delete element ${T} p_${key} { ${dropped.join(', ')} }`,
    );
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Runs an nft script as one transaction. */
export async function runNft(script: string, nftBinary = 'nft'): Promise<void> {
  await runProgram(nftBinary, ['-f', '-'], { input: script, timeoutMs: 10_000 });
}
