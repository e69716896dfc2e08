/**
 * Which network addresses the server refuses to contact on a user's behalf (webhooks, template registries and git
 * servers, a VM's egress): every address that reaches into its own host or network rather than the public internet
 * (SSRF): loopback, private (RFC 1918, carrier-grade NAT, IPv6 unique-local), link-local, cloud metadata,
 * unspecified, multicast and reserved ranges, also when written as IPv4-mapped or NAT64 IPv6.
 */
import net from 'node:net';

const RANGES: [label: string, cidrs: string[]][] = [
  // First, so the metadata addresses are named as such rather than as link-local or private.
  ['cloud metadata', ['169.254.169.254/32', '100.100.100.200/32', 'fd00:ec2::254/128']],
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']],
  ['carrier-grade NAT', ['100.64.0.0/10']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  ['reserved', ['240.0.0.0/4', '192.0.0.0/24', '198.18.0.0/15']],
];

const LISTS: [string, net.BlockList][] = RANGES.map(([label, cidrs]) => {
  const list = new net.BlockList();
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(address, Number(prefix), net.isIPv6(address) ? 'ipv6' : 'ipv4');
  }
  return [label, list];
});

/** The IPv4 address embedded in a NAT64 (64:ff9b::/96) address, which would reach that IPv4 host. */
function nat64Embedded(address: string): string | null {
  const match = /^64:ff9b::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address) ?? null;
  if (match) {
    const high = Number.parseInt(match[1]!, 16);
    const low = Number.parseInt(match[2]!, 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  const dotted = /^64:ff9b::(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return dotted ? dotted[1]! : null;
}

/** Why the server may not contact an IP address (e.g. "loopback"), or null when it may. */
export function forbiddenAddressReason(address: string): string | null {
  const family = net.isIP(address);
  if (family === 0) return 'unparseable';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  for (const [label, list] of LISTS) if (list.check(address, type)) return label;
  const embedded = family === 6 ? nat64Embedded(address) : null;
  return embedded ? forbiddenAddressReason(embedded) : null;
}
