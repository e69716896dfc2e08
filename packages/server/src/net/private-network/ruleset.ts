/**
 * The nftables side of private networks: one table per server node (`privateNetworkTableName`) with one NAT chain
 * that, for each member VM of this node, redirects its QEMU's TCP connections to its networks' CIDRs to that VM's
 * relay listener on the host's loopback. A VM is recognised by its QEMU's cgroup (`socket cgroupv2`, as the egress
 * table does), never by anything the guest sends; the listener a connection arrives on names the source VM.
 *
 * The chain runs at priority -110, before the egress table's NAT chain (-100): the first NAT binding of a
 * connection wins, so a member's connection to port 80 of another member reaches the relay, not the egress proxy.
 * The redirect sets the egress redirect mark, which the host guard and the egress filter accept (the relay, like
 * the egress listeners, applies its own checks); what is not redirected (UDP, ICMP, another VM's traffic, a
 * non-member's) stays in 10.0.0.0/8 and the guard rejects it.
 */
import { createHash } from 'node:crypto';
import { EGRESS_REDIRECT_MARK } from '../../host/firewall-marks.ts';
import { runProgram } from '../../host/run-program.ts';

export const PRIVATE_NETWORK_TABLE_PREFIX = 'sandboxd_pnet';

/** All networks' addresses: every network's /24 lies in it (and in 10.0.0.0/8, which the host guard rejects). */
export const PRIVATE_NETWORK_RANGE = '10.250.0.0/16';

export function privateNetworkTableName(nodeId: string): string {
  return `${PRIVATE_NETWORK_TABLE_PREFIX}_${createHash('sha256').update(nodeId).digest('hex').slice(0, 8)}`;
}

/** One member VM's redirect. */
export interface RelayRule {
  cgroupPath: string;
  level: number;
  /** Its networks' CIDRs (`10.250.<n>.0/24`). */
  cidrs: string[];
  /** Its relay listener's loopback port. */
  port: number;
}

function check(rule: RelayRule): void {
  if (!/^[A-Za-z0-9_./-]+$/.test(rule.cgroupPath) || rule.cgroupPath.split('/').includes('..'))
    throw new Error(`bad cgroup path ${JSON.stringify(rule.cgroupPath)}`);
  if (!Number.isInteger(rule.level) || rule.level < 1) throw new Error(`bad cgroup level ${rule.level}`);
  if (!Number.isInteger(rule.port) || rule.port < 1 || rule.port > 65535) throw new Error(`bad port ${rule.port}`);
  for (const cidr of rule.cidrs) if (!/^10\.250\.\d{1,3}\.0\/24$/.test(cidr)) throw new Error(`bad network CIDR ${cidr}`);
}

/** The whole table, replaced in one transaction: the NAT chain with one rule per member VM that has networks. */
export function relayTableScript(table: string, rules: RelayRule[]): string {
  if (!/^\w+$/.test(table)) throw new Error(`bad table name ${JSON.stringify(table)}`);
  for (const rule of rules) check(rule);
  const T = `inet ${table}`;
  return [
    `table ${T} {`,
    '  chain nat_output { type nat hook output priority -110; policy accept; }',
    '}',
    `flush chain ${T} nat_output`,
    ...rules
      .filter((rule) => rule.cidrs.length > 0)
      .map(
        (rule) =>
          `add rule ${T} nat_output socket cgroupv2 level ${rule.level} "${rule.cgroupPath}" ip daddr { ${rule.cidrs.join(', ')} } meta l4proto tcp ct mark set ${EGRESS_REDIRECT_MARK} redirect to :${rule.port}`,
      ),
    '',
  ].join('\n');
}

export async function applyRelayTable(table: string, rules: RelayRule[], nftBinary = 'nft'): Promise<void> {
  await runProgram(nftBinary, ['-f', '-'], { input: relayTableScript(table, rules), timeoutMs: 10_000 });
}

export async function deleteRelayTable(table: string, nftBinary = 'nft'): Promise<void> {
  await runProgram(nftBinary, ['delete', 'table', 'inet', table], { timeoutMs: 10_000 }).catch(() => undefined);
}
