/**
 * Where a redirected connection was going. Node cannot read SO_ORIGINAL_DST, so the relay reads the kernel's
 * connection tracking table (/proc/net/nf_conntrack), whose entry of a redirected connection holds both
 * directions: the original (QEMU's socket → the address the guest dialed) and the reply (the relay's listener →
 * QEMU's socket). The accepted socket's peer address and port and the listener's port find the entry.
 */
import { readFile } from 'node:fs/promises';

const CONNTRACK_FILE = '/proc/net/nf_conntrack';

export interface OriginalDestination {
  address: string;
  port: number;
}

/** Parses one nf_conntrack line into its two tuples (null for anything but IPv4 TCP). */
export function parseConntrackLine(line: string): { original: Record<string, string>; reply: Record<string, string> } | null {
  const fields = line.trim().split(/\s+/);
  if (fields[0] !== 'ipv4' || fields[2] !== 'tcp') return null;
  const original: Record<string, string> = {};
  const reply: Record<string, string> = {};
  for (const field of fields) {
    const eq = field.indexOf('=');
    if (eq < 0) continue;
    const key = field.slice(0, eq);
    if (!['src', 'dst', 'sport', 'dport'].includes(key)) continue;
    // Each key comes twice: the original tuple first, then the reply.
    if (original[key] === undefined) original[key] = field.slice(eq + 1);
    else if (reply[key] === undefined) reply[key] = field.slice(eq + 1);
  }
  return original.dst && reply.src ? { original, reply } : null;
}

/**
 * The original destination of the connection from `peer` (address and port, as the accepted socket sees it) to
 * the listener on `listenerPort`; null when the table holds no such redirected entry.
 */
export function findOriginalDestination(text: string, peer: { address: string; port: number }, listenerPort: number): OriginalDestination | null {
  for (const line of text.split('\n')) {
    if (!line.includes(`sport=${peer.port} `) && !line.includes(`dport=${peer.port} `)) continue;
    const parsed = parseConntrackLine(line);
    if (!parsed) continue;
    const { original, reply } = parsed;
    if (original.src === peer.address && original.sport === String(peer.port) && reply.sport === String(listenerPort) && reply.dport === String(peer.port)) {
      return { address: original.dst!, port: Number(original.dport) };
    }
  }
  return null;
}

/** Reads the table and finds the connection's original destination. */
export async function originalDestination(
  peer: { address: string; port: number },
  listenerPort: number,
  file = CONNTRACK_FILE,
): Promise<OriginalDestination | null> {
  return findOriginalDestination(await readFile(file, 'utf8'), peer, listenerPort);
}
