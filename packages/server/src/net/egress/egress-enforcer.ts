/**
 * Egress policies enforced on the host, per VM: the firewall rules (`ruleset.ts`), the VM's DNS resolver
 * (`policy-resolver.ts`) and its HTTP/HTTPS proxy (`egress-proxy.ts`), kept in step, and every connection
 * attempt they see reported through `onAttempt` (the audit log). Only VMs whose policy is restricted, or whose
 * session holds vault placeholders (their HTTPS to bound hosts is intercepted), are here: an open policy
 * otherwise means no rules at all (today's path, at no cost).
 *
 * Nothing of it is inside the guest: the rules match QEMU's cgroup, the resolver and the proxy are the
 * server's. A root user in the guest can flush its own firewall, rewrite resolv.conf or ask another DNS server;
 * its packets still leave through QEMU, into these rules.
 */
import os from 'node:os';
import { allowsAddress, allowsName, allowsScheme, isOpenEgressPolicy, parsePorts, type EgressPolicy } from '../../core/egress-policy.ts';
import { forbiddenAddressReason } from '../../host/forbidden-addresses.ts';
import type { InterceptedRequest, RewrittenRequest, VaultPlan } from '../../core/vault/vault-ports.ts';
import type { LeafCertificates } from './certificate-authority.ts';
import { EgressProxy } from './egress-proxy.ts';
import type { EgressDecision, EgressRequest, ProxiedConnection } from './proxied-connection.ts';
import { TlsInterceptor } from './tls-interceptor.ts';
import { PinTable } from './pin-table.ts';
import { lookupA, PolicyResolver, type Upstream } from './policy-resolver.ts';
import { applyScript, ensureTableScript, pinScript, reapLeftovers, removeScript, ruleKey, runNft, type EgressClassifier, type EgressPorts } from './ruleset.ts';
import { TraceMonitor, type TracedAttempt } from './trace-monitor.ts';

import type { EgressAttempt } from '../../activity.ts';

export type { EgressAttempt };

export interface EgressEnforcerOptions {
  /** This server's table (`egressTableName(nodeId)`). */
  table: string;
  /** Where allowed names are resolved (asked once, at the first use). */
  upstreams: Upstream[] | (() => Promise<Upstream[]>);
  onAttempt(attempt: EgressAttempt): void;
  nftBinary?: string;
  /** Names a VM's pin table holds at most (the least recently used go first); default 1024. */
  maxPinnedNames?: number;
  /** The vault: which allowed web connections are intercepted or inspected, and how requests are rewritten. */
  vault?: {
    plan(vmId: string, scheme: 'http' | 'https', name: string | null, address: string): Promise<VaultPlan | null>;
    rewrite(vmId: string, request: InterceptedRequest): Promise<RewrittenRequest>;
    /** Certificates of the deployment's CA for the names intercepted (loaded at the first interception). */
    leafs(): Promise<LeafCertificates>;
    /** Extra CAs hosts a secret is bound to may present (besides Node's roots). */
    upstreamCa: string[];
  };
}

/** Firewall pin changes of one VM waiting for their transaction, and who waits for them. */
interface PinBatch {
  fresh: Map<string, number>;
  dropped: Set<string>;
  waiters: { resolve(): void; reject(error: Error): void }[];
}

interface VmEntry {
  vmId: string;
  key: string;
  classifier: EgressClassifier;
  policy: EgressPolicy;
  resolver: PolicyResolver;
  proxy: EgressProxy;
  /** Terminates the TLS of the VM's connections to hosts a vault secret is bound to (made at the first). */
  interceptor: TlsInterceptor | null;
  ports: EgressPorts;
  /** The addresses its DNS answers pinned for allowed names (in memory; in the firewall only with `allowed_ports`). */
  pins: PinTable;
  /** Its pin transaction running now (one at a time per VM), and the changes gathered for the next. */
  pinRunning: Promise<void> | null;
  pinPending: PinBatch | null;
}

let hostAddresses: { at: number; addresses: Set<string> } | null = null;

/** Whether `address` is one of this host's own (the host guard refuses those as it refuses loopback). Read at most once a second. */
export function isHostAddress(address: string): boolean {
  const now = Date.now();
  if (!hostAddresses || now - hostAddresses.at > 1000) {
    hostAddresses = { at: now, addresses: new Set(Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address))) };
  }
  return hostAddresses.addresses.has(address);
}

/** Why an address must never be pinned or connected to (loopback, private, metadata, the host's own), or null. */
export function unreachableReason(address: string): string | null {
  return forbiddenAddressReason(address) ?? (isHostAddress(address) ? 'host' : null);
}

export class EgressEnforcer {
  private readonly vms = new Map<string, VmEntry>();
  private readonly byKey = new Map<string, VmEntry>();
  private readonly trace: TraceMonitor;
  /**
   * Structural nft transactions (a VM's rules applied or removed, leftovers reaped) one at a time: each rebuilds the
   * jumps of all VMs. Pins never wait here: each VM has a queue of its own (`pinRunning`), so one guest flooding
   * DNS answers delays neither another VM's lookups nor a VM's start.
   */
  private queue: Promise<unknown> = Promise.resolve();
  private started: Promise<void> | null = null;
  private upstreams: Upstream[] = [];

  constructor(private readonly options: EgressEnforcerOptions) {
    this.trace = new TraceMonitor(options.table, (attempt) => this.traced(attempt), options.nftBinary);
  }

  /**
   * Resolves the upstream DNS servers; idempotent. The table is created with the first restricted VM and
   * deleted with the last, so a server whose VMs are all open leaves nothing in nftables. What an earlier
   * process left stays until `reap`.
   */
  start(): Promise<void> {
    this.started ??= (async () => {
      const { upstreams } = this.options;
      this.upstreams = typeof upstreams === 'function' ? await upstreams() : upstreams;
    })();
    return this.started;
  }

  /**
   * Removes the rules of VMs this process does not enforce (an earlier process's VMs that ended, or that
   * became open): called once the live VMs' policies are re-applied after a restart. Resolves with their keys.
   */
  async reap(): Promise<string[]> {
    await this.start();
    const run = this.queue.then(() => reapLeftovers(this.options.table, new Set(this.byKey.keys()), [...this.vms.values()], this.options.nftBinary));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private nft(script: string): Promise<void> {
    const run = this.queue.then(() => runNft(script, this.options.nftBinary));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The policy enforced for a VM, or undefined when it has none here (open). */
  policyOf(vmId: string): EgressPolicy | undefined {
    return this.vms.get(vmId)?.policy;
  }

  /** VMs with a restricted policy on this host. */
  vmIds(): string[] {
    return [...this.vms.keys()];
  }

  /**
   * Enforces `policy` on a VM from now on (its first restricted policy, or a change): new connections and
   * lookups follow it as soon as this resolves. Addresses pinned for names the new policy still allows stay.
   */
  async apply(vmId: string, classifier: EgressClassifier, policy: EgressPolicy): Promise<void> {
    await this.start();
    let entry = this.vms.get(vmId);
    if (!entry) entry = await this.open(vmId, classifier, policy);
    entry.policy = policy;
    entry.classifier = classifier;
    const now = Date.now();
    entry.pins.retain((name) => allowsName(policy, name), now);
    const openPorts = parsePorts(policy.allowedPorts);
    try {
      await this.nft(
        ensureTableScript(this.options.table) +
          applyScript(
            this.options.table,
            {
              key: entry.key,
              classifier,
              ports: entry.ports,
              allowHttp: policy.allowHttp,
              allowHttps: policy.allowHttps,
              cidrs: policy.allowedCidrs,
              openPorts,
              // The firewall needs the pins only to open `allowed_ports` on them; the proxy reads the table itself.
              pinned: openPorts.length ? entry.pins.addresses(now) : [],
            },
            [...this.vms.values()],
          ),
      );
    } catch (error) {
      if (!this.byKey.has(entry.key) || this.vms.get(vmId) !== entry) throw error;
      // A first apply that failed leaves nothing behind (a change that failed keeps the previous rules).
      if (!(await this.hasRules(entry))) await this.forget(entry);
      throw error;
    }
    this.trace.start();
  }

  private async hasRules(entry: VmEntry): Promise<boolean> {
    return runNft(`list chain inet ${this.options.table} f_${entry.key}\n`, this.options.nftBinary).then(
      () => true,
      () => false,
    );
  }

  private async open(vmId: string, classifier: EgressClassifier, policy: EgressPolicy): Promise<VmEntry> {
    const key = ruleKey(vmId);
    const entry: VmEntry = {
      vmId,
      key,
      classifier,
      policy,
      pins: new PinTable(this.options.maxPinnedNames),
      pinRunning: null,
      pinPending: null,
      interceptor: null,
      ports: { dnsUdp: 0, dnsTcp: 0, http: 0, https: 0 },
    } as VmEntry;
    entry.resolver = new PolicyResolver({
      upstreams: this.upstreams,
      allows: (name) => allowsName(entry.policy, name),
      pin: (name, addresses) => this.pin(entry, name, addresses),
      refused: (name) =>
        this.report(entry, {
          protocol: 'dns',
          scheme: null,
          name,
          address: null,
          port: 53,
          bytesSent: null,
          bytesReceived: null,
          verdict: 'refused',
          reason: 'name not allowed by the egress policy',
        }),
    });
    entry.proxy = new EgressProxy({
      decide: (request) => this.decide(entry, request),
      record: (connection) => this.recordProxied(entry, connection),
      intercept: async (socket, head, request, address) => {
        const vault = this.options.vault;
        if (!vault || !request.name) throw new Error('nothing to intercept with');
        const leafs = await vault.leafs();
        entry.interceptor ??= new TlsInterceptor({ leafs, upstreamCa: vault.upstreamCa, rewrite: (intercepted) => vault.rewrite(vmId, intercepted) });
        return entry.interceptor.handle(socket, head, request.name, address, request.port);
      },
    });
    const dns = await entry.resolver.listen();
    const web = await entry.proxy.listen();
    entry.ports = { dnsUdp: dns.udpPort, dnsTcp: dns.tcpPort, http: web.httpPort, https: web.httpsPort };
    this.vms.set(vmId, entry);
    this.byKey.set(key, entry);
    return entry;
  }

  /** Stops enforcing for a VM (it ended, or its policy became open): rules, resolver and proxy go. */
  async remove(vmId: string): Promise<void> {
    const entry = this.vms.get(vmId);
    if (!entry) return;
    this.vms.delete(vmId);
    // The last restricted VM takes the table with it (a later one creates it again).
    await this.nft(
      this.vms.size === 0 ? `delete table inet ${this.options.table}\n` : removeScript(this.options.table, entry.key, [...this.vms.values()]),
    ).catch(() => undefined);
    await this.forget(entry);
  }

  private async forget(entry: VmEntry): Promise<void> {
    if (this.vms.get(entry.vmId) === entry) this.vms.delete(entry.vmId);
    this.byKey.delete(entry.key);
    await Promise.all([entry.resolver.close(), entry.proxy.close(), entry.interceptor?.close()]);
    if (this.vms.size === 0) this.trace.stop();
  }

  /**
   * Pins a DNS answer's addresses for `name` (never a loopback, private, metadata or host address: the host guard
   * is not the only barrier). The proxy reads the pins from memory, so nothing else is needed unless the policy
   * opens `allowed_ports` on pins: then the firewall gets them too, and the promise to wait for is returned.
   */
  private pin(entry: VmEntry, name: string, addresses: { address: string; ttlSeconds: number }[]): Promise<void> | undefined {
    const pinnable = addresses.filter(({ address }) => unreachableReason(address) === null);
    if (pinnable.length === 0) return undefined;
    const change = entry.pins.pin(name, pinnable, Date.now());
    if (entry.policy.allowedPorts.length === 0 || (change.fresh.length === 0 && change.dropped.length === 0)) return undefined;
    return this.schedulePins(entry, change.fresh, change.dropped);
  }

  /** Adds pin changes to the VM's next transaction (gathered while one runs); resolves once they are in the firewall. */
  private schedulePins(entry: VmEntry, fresh: { address: string; ttlSeconds: number }[], dropped: string[]): Promise<void> {
    const batch: PinBatch = (entry.pinPending ??= { fresh: new Map(), dropped: new Set(), waiters: [] as PinBatch['waiters'] });
    for (const address of dropped) {
      batch.fresh.delete(address);
      batch.dropped.add(address);
    }
    for (const { address, ttlSeconds } of fresh) {
      batch.dropped.delete(address);
      batch.fresh.set(address, Math.max(ttlSeconds, batch.fresh.get(address) ?? 0));
    }
    const done = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
    entry.pinRunning ??= this.runPins(entry);
    return done;
  }

  /** Runs the VM's pin transactions one after another while changes are pending. */
  private async runPins(entry: VmEntry): Promise<void> {
    // Returns to `schedulePins` before anything runs, so that `pinRunning` is set before it can be cleared.
    await Promise.resolve();
    try {
      while (entry.pinPending) {
        const batch = entry.pinPending;
        entry.pinPending = null;
        try {
          if (this.vms.get(entry.vmId) !== entry) throw new Error('the VM is no longer enforced here');
          const fresh = [...batch.fresh].map(([address, ttlSeconds]) => ({ address, ttlSeconds }));
          const script = pinScript(this.options.table, entry.key, fresh, [...batch.dropped]);
          if (script) await runNft(script, this.options.nftBinary);
          for (const waiter of batch.waiters) waiter.resolve();
        } catch (error) {
          for (const waiter of batch.waiters) waiter.reject(error as Error);
        }
      }
    } finally {
      // No await between the loop's last look at `pinPending` and this: a change scheduled later starts a new run.
      entry.pinRunning = null;
    }
  }

  private async decide(entry: VmEntry, request: EgressRequest): Promise<EgressDecision> {
    const policy = entry.policy;
    if (!allowsScheme(policy, request.scheme)) return { allowed: false, reason: `${request.scheme} is closed by the egress policy` };
    // The SNI of an ECH ClientHello is a front end's public name; the name it really asks for is encrypted.
    if (request.encryptedClientHello && !isOpenEgressPolicy(policy))
      return { allowed: false, reason: 'encrypted ClientHello (ECH) hides the server name: refused under a restricted egress policy' };
    let address: string;
    if (request.literalAddress) {
      if (!allowsAddress(policy, request.literalAddress)) return { allowed: false, reason: 'address not in allowed_cidrs' };
      address = request.literalAddress;
    } else if (request.name) {
      if (!allowsName(policy, request.name)) return { allowed: false, reason: 'name not allowed by the egress policy' };
      const pinned = entry.pins.addressOf(request.name, Date.now());
      if (pinned) address = pinned;
      else {
        // The guest did not ask our resolver (a hosts file, curl --resolve): resolve the name it sent instead,
        // so a forged address for an allowed name is never what we connect to.
        const records = (await lookupA(request.name, this.upstreams)).filter(({ address: candidate }) => unreachableReason(candidate) === null);
        if (!records.length) return { allowed: false, reason: 'the name has no public IPv4 address' };
        await this.pin(entry, request.name, records);
        address = records[0]!.address;
      }
    } else {
      return { allowed: false, reason: request.scheme === 'https' ? 'no server name (SNI) in the TLS ClientHello' : 'no usable Host header' };
    }
    const forbidden = unreachableReason(address);
    if (forbidden) return { allowed: false, reason: `${forbidden} address` };
    const plan = await this.options.vault?.plan(entry.vmId, request.scheme, request.name, address);
    if (plan?.intercept) return { allowed: true, address, intercept: true };
    return plan ? { allowed: true, address, inspect: plan.inspect } : { allowed: true, address };
  }

  private recordProxied(entry: VmEntry, connection: ProxiedConnection): void {
    const { request } = connection;
    this.report(entry, {
      protocol: 'tcp',
      scheme: request.scheme,
      name: request.name,
      address: connection.address ?? request.literalAddress,
      port: request.port,
      bytesSent: connection.bytesSent,
      bytesReceived: connection.bytesReceived,
      verdict: connection.verdict,
      reason: connection.reason,
      at: connection.startedAt,
    });
  }

  private traced(attempt: TracedAttempt): void {
    const entry = this.byKey.get(attempt.key);
    if (!entry) return;
    const name = entry.pins.nameOf(attempt.address, Date.now());
    this.report(entry, {
      protocol: attempt.protocol,
      scheme: null,
      name,
      address: attempt.address,
      port: attempt.port,
      bytesSent: null,
      bytesReceived: null,
      verdict: attempt.verdict,
      reason: attempt.verdict === 'allowed' ? null : refusalReason(attempt, name !== null),
    });
  }

  private report(entry: VmEntry, attempt: Omit<EgressAttempt, 'vmId' | 'at'> & { at?: Date }): void {
    try {
      this.options.onAttempt({ vmId: entry.vmId, at: attempt.at ?? new Date(), ...attempt });
    } catch {
      // the audit sink's failure must not break the guest's traffic
    }
  }

  /**
   * Closes every listener (server shutdown). Unless `dropRules`, the rules stay: while no server runs, a
   * restricted VM's DNS and web connections fail closed; the next process re-applies the policies and reaps the rest.
   */
  async close({ dropRules }: { dropRules: boolean } = { dropRules: false }): Promise<void> {
    this.trace.stop();
    const entries = [...this.vms.values()];
    this.vms.clear();
    await Promise.all(entries.map((entry) => this.forget(entry)));
    if (dropRules) await this.queue.then(() => runNft(`delete table inet ${this.options.table}\n`, this.options.nftBinary)).catch(() => undefined);
  }
}

/** Why the firewall refused a packet, for the egress log. */
function refusalReason(attempt: TracedAttempt, pinned: boolean): string {
  if (attempt.protocol === 'tcp' && (attempt.port === 80 || attempt.port === 443))
    return `${attempt.port === 80 ? 'http' : 'https'} is closed by the egress policy`;
  if (pinned) {
    const what = attempt.port === null ? attempt.protocol : `${attempt.port}/${attempt.protocol}`;
    return `${what} is not in allowed_ports: an allowed name opens only HTTP and HTTPS, through the proxy`;
  }
  return 'address not pinned by an allowed name nor in allowed_cidrs';
}
