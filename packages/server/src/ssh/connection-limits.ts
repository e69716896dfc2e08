/**
 * What one SSH client may hold of the gateway before and after it logs in: connections at once (overall and per
 * source), the time it has to authenticate, its authentication attempts and its open channels. Without these a
 * client with no key at all could hold thousands of idle connections, or loop through database-backed login
 * attempts on one connection, for free.
 */
import net from 'node:net';

/** The limits, from the configuration (`SANDBOXD_SSH_*`). */
export interface SshLimits {
  /** Connections at once, authenticated or not. */
  maxConnections: number;
  /** Connections at once from one source: an IPv4 address, or an IPv6 /64 (one host's usual allocation). */
  maxConnectionsPerSource: number;
  /** A connection not authenticated by then is dropped, whatever it is doing. */
  loginGraceMs: number;
  /** Failed authentication attempts per connection; the connection is closed at the last one (OpenSSH's MaxAuthTries). */
  maxAuthTries: number;
  /** Channels (sessions and forwardings) open at once per connection (OpenSSH's MaxSessions). */
  maxChannels: number;
}

/**
 * Authentication requests of any kind per connection, per allowed failure: key queries (answered yes to any key,
 * see `ssh-gateway.ts`) and `none` do not fail, so they are bounded by this multiple instead.
 */
export const AUTH_REQUESTS_PER_TRY = 3;

/** The source a connection is counted under: an IPv4 address (also when IPv4-mapped) or an IPv6 address's /64. */
export function connectionSource(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (net.isIPv6(address)) {
    const groups = expandIpv6(address.replace(/%.*$/, ''));
    return groups ? `${groups.slice(0, 4).join(':')}::/64` : address;
  }
  return address;
}

/** The eight groups of an IPv6 address, each without leading zeros; null when it is not one. */
function expandIpv6(address: string): string[] | null {
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  return [...head, ...Array<string>(missing).fill('0'), ...tail].map((group) => (Number.parseInt(group, 16) || 0).toString(16));
}

/** Counts connections overall and per source; a connection is admitted only while both are under their limits. */
export class ConnectionCounter {
  private total = 0;
  private readonly bySource = new Map<string, number>();

  constructor(private readonly limits: Pick<SshLimits, 'maxConnections' | 'maxConnectionsPerSource'>) {}

  /** Counts a new connection from `source`, or answers why it is refused (and counts nothing). */
  admit(source: string): string | null {
    if (this.total >= this.limits.maxConnections) return `the gateway holds ${this.total} connections, its limit (SANDBOXD_SSH_MAX_CONNECTIONS)`;
    const fromSource = this.bySource.get(source) ?? 0;
    if (fromSource >= this.limits.maxConnectionsPerSource)
      return `${source} holds ${fromSource} connections, the limit per source (SANDBOXD_SSH_MAX_CONNECTIONS_PER_SOURCE)`;
    this.total += 1;
    this.bySource.set(source, fromSource + 1);
    return null;
  }

  /** Forgets a connection `admit` counted. */
  release(source: string): void {
    this.total = Math.max(0, this.total - 1);
    const left = (this.bySource.get(source) ?? 1) - 1;
    if (left > 0) this.bySource.set(source, left);
    else this.bySource.delete(source);
  }

  /** Connections counted now (overall). */
  get size(): number {
    return this.total;
  }
}
