/**
 * Conntrack marks that the host's two nftables tables agree on: the egress table (`net/egress/ruleset.ts`) sets
 * them, the network guard (`vm/qemu/network-guard.ts`) reads them. Kept here, below both, so neither imports the
 * other.
 */

/**
 * The conntrack mark of connections redirected to a sandboxd listener on the host's loopback that applies its own
 * checks: the egress resolver or proxy, or the private networks' relay. The host guard (and the egress filter) let
 * exactly these reach the host's loopback; only the egress table and the relay's table
 * (`net/private-network/ruleset.ts`) set it, each on its own redirects.
 */
export const EGRESS_REDIRECT_MARK = 0x5bd0e9;
