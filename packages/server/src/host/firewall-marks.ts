/**
 * Conntrack marks that the host's two nftables tables agree on: the egress table (`net/egress/ruleset.ts`) sets
 * them, the network guard (`vm/qemu/network-guard.ts`) reads them. Kept here, below both, so neither imports the
 * other.
 */

/**
 * The conntrack mark of connections redirected to the egress resolver or proxy. The host guard lets exactly these
 * reach the host's loopback; only the egress table sets it.
 */
export const EGRESS_REDIRECT_MARK = 0x5bd0e9;
