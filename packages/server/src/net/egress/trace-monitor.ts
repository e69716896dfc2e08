/**
 * Connection attempts the firewall decided itself (anything but DNS, HTTP and HTTPS, which the resolver and the
 * proxy log): the per-VM filter chains set `nftrace` on the first packet of each connection, and one
 * `nft monitor trace` process reports those packets with the rule that decided them. nft ships with the host
 * guard already, and unlike NFLOG or the kernel log it needs no extra daemon and works in any network namespace.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

/** One first packet the firewall allowed or refused. */
export interface TracedAttempt {
  /** The VM's rule key (the chain was `f_<key>`). */
  key: string;
  protocol: 'tcp' | 'udp' | 'icmp' | 'other';
  address: string;
  port: number | null;
  verdict: 'allowed' | 'refused';
}

interface PendingPacket {
  key: string;
  protocol: TracedAttempt['protocol'];
  address: string;
  port: number | null;
}

/** Parses trace lines into attempts; exported for its test. */
export class TraceParser {
  private readonly pending = new Map<string, PendingPacket>();
  private readonly packetLine: RegExp;
  private readonly ruleLine: RegExp;

  /** `table`: the egress table whose chains `f_<key>` are traced (other tables' lines are ignored). */
  constructor(table: string) {
    this.packetLine = new RegExp(`^trace id (\\w+) inet ${table} f_(\\w+) packet: (.*)$`);
    // A rule added after the monitor started prints as `unknown rule handle N`: its verdict is what counts.
    this.ruleLine = new RegExp(`^trace id (\\w+) inet ${table} f_\\w+ (?:unknown )?rule .*\\(verdict (\\w+)\\)\\s*$`);
  }

  /** Feeds one line; returns the attempt it completes, if any. */
  push(line: string): TracedAttempt | null {
    const packet = this.packetLine.exec(line);
    if (packet) {
      const fields = packet[3]!;
      const address = /\bip daddr (\d+\.\d+\.\d+\.\d+)/.exec(fields)?.[1];
      if (!address) return null;
      const protocolName = /\bip protocol (\w+)/.exec(fields)?.[1];
      const protocol: TracedAttempt['protocol'] = protocolName === 'tcp' || protocolName === 'udp' || protocolName === 'icmp' ? protocolName : 'other';
      const port = /\b(?:tcp|udp) dport (\d+)/.exec(fields)?.[1];
      if (this.pending.size > 10_000) this.pending.clear(); // lines lost: never grow without bound
      this.pending.set(packet[1]!, { key: packet[2]!, protocol, address, port: port ? Number(port) : null });
      return null;
    }
    const rule = this.ruleLine.exec(line);
    if (!rule) return null;
    const seen = this.pending.get(rule[1]!);
    if (!seen) return null;
    this.pending.delete(rule[1]!);
    const verdict = rule[2] === 'accept' ? 'allowed' : rule[2] === 'drop' ? 'refused' : null;
    return verdict ? { ...seen, verdict } : null;
  }
}

/** Runs `nft monitor trace` while started; restarts it if it dies. */
export class TraceMonitor {
  private child: ChildProcessWithoutNullStreams | null = null;
  private stopped = true;
  /** A SYN retried after a refusal is the same attempt: one report per 5-tuple and second. */
  private readonly recent = new Map<string, number>();

  constructor(
    private readonly table: string,
    private readonly onAttempt: (attempt: TracedAttempt) => void,
    private readonly nftBinary = 'nft',
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.spawn();
  }

  private spawn(): void {
    const parser = new TraceParser(this.table);
    const child = spawn(this.nftBinary, ['monitor', 'trace'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    child.on('error', () => undefined);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const attempt = parser.push(line);
      if (attempt) this.report(attempt);
    });
    child.stderr.resume();
    child.once('exit', () => {
      if (this.child === child) this.child = null;
      if (!this.stopped) setTimeout(() => !this.stopped && !this.child && this.spawn(), 1000).unref();
    });
  }

  private report(attempt: TracedAttempt): void {
    const now = Date.now();
    const id = `${attempt.key}|${attempt.protocol}|${attempt.address}|${attempt.port}|${attempt.verdict}`;
    if ((this.recent.get(id) ?? 0) > now - 1000) return;
    this.recent.set(id, now);
    if (this.recent.size > 5000) for (const [k, at] of this.recent) if (at < now - 1000) this.recent.delete(k);
    this.onAttempt(attempt);
  }

  stop(): void {
    this.stopped = true;
    this.child?.kill('SIGTERM');
    this.child = null;
  }
}
