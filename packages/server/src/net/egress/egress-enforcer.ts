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
import { allowsAddress, allowsName, allowsScheme, type EgressPolicy } from '../../core/egress-policy.ts';
import { forbiddenAddressReason } from '../../core/webhooks/address-policy.ts';
import type { VaultPlan } from '../../core/vault/vault-gateway.ts';
import type { LeafCertificates } from './certificate-authority.ts';
import { EgressProxy, type EgressDecision, type EgressRequest, type ProxiedConnection } from './egress-proxy.ts';
import { TlsInterceptor, type InterceptedRequest, type RewrittenRequest } from './tls-interceptor.ts';
import { lookupA, PolicyResolver, type Upstream } from './policy-resolver.ts';
import { applyScript, ensureTableScript, pinScript, reapLeftovers, removeScript, ruleKey, runNft, type EgressClassifier, type EgressPorts } from './ruleset.ts';
import { TraceMonitor, type TracedAttempt } from './trace-monitor.ts';

/** One connection attempt of a VM, allowed or refused. */
export interface EgressAttempt {
  vmId: string;
  at: Date;
  /** `dns` for a refused name lookup, otherwise the transport. */
  protocol: 'tcp' | 'udp' | 'icmp' | 'dns' | 'other';
  /** `http`/`https` when the proxy handled it. */
  scheme: 'http' | 'https' | null;
  /** The name asked for (DNS question, SNI, Host), or the one a DNS answer gave for the address. */
  name: string | null;
  address: string | null;
  port: number | null;
  bytesSent: number | null;
  bytesReceived: number | null;
  verdict: 'allowed' | 'refused';
  reason: string | null;
}

export interface EgressEnforcerOptions {
  /** This server's table (`egressTableName(nodeId)`). */
  table: string;
  /** Where allowed names are resolved (asked once, at the first use). */
  upstreams: Upstream[] | (() => Promise<Upstream[]>);
  onAttempt(attempt: EgressAttempt): void;
  nftBinary?: string;
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

interface Pin {
  name: string;
  expiresAtMs: number;
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
  /** Pinned address → the name whose answer pinned it. */
  pins: Map<string, Pin>;
}

/** Whether `address` is one of this host's own (the host guard refuses those as it refuses loopback). */
function isHostAddress(address: string): boolean {
  return Object.values(os.networkInterfaces()).some((list) => list?.some((entry) => entry.address === address));
}

export class EgressEnforcer {
  private readonly vms = new Map<string, VmEntry>();
  private readonly byKey = new Map<string, VmEntry>();
  private readonly trace: TraceMonitor;
  /** nft transactions one at a time: each rebuilds the jumps of all VMs. */
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
    for (const [address, pin] of entry.pins) if (pin.expiresAtMs <= now || !allowsName(policy, pin.name)) entry.pins.delete(address);
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
            pinned: [...entry.pins].map(([address, pin]) => ({ address, ttlSeconds: (pin.expiresAtMs - now) / 1000 })),
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
    const entry: VmEntry = { vmId, key, classifier, policy, pins: new Map(), interceptor: null, ports: { dnsUdp: 0, dnsTcp: 0, http: 0, https: 0 } } as VmEntry;
    entry.resolver = new PolicyResolver({
      upstreams: this.upstreams,
      allows: (name) => allowsName(entry.policy, name),
      pin: (name, addresses) => this.pin(entry, name, addresses),
      refused: (name) => this.report(entry, { protocol: 'dns', scheme: null, name, address: null, port: 53, bytesSent: null, bytesReceived: null, verdict: 'refused', reason: 'name not allowed by the egress policy' }),
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
    await this.nft(this.vms.size === 0 ? `delete table inet ${this.options.table}\n` : removeScript(this.options.table, entry.key, [...this.vms.values()])).catch(() => undefined);
    await this.forget(entry);
  }

  private async forget(entry: VmEntry): Promise<void> {
    if (this.vms.get(entry.vmId) === entry) this.vms.delete(entry.vmId);
    this.byKey.delete(entry.key);
    await Promise.all([entry.resolver.close(), entry.proxy.close(), entry.interceptor?.close()]);
    if (this.vms.size === 0) this.trace.stop();
  }

  private async pin(entry: VmEntry, name: string, addresses: { address: string; ttlSeconds: number }[]): Promise<void> {
    const now = Date.now();
    // An nft transaction costs ~20 ms (a process): a pin with more than half its lifetime left is kept as it is.
    const stale = addresses.filter(({ address, ttlSeconds }) => {
      const pin = entry.pins.get(address);
      return !pin || pin.name !== name || pin.expiresAtMs - now < (ttlSeconds * 1000) / 2;
    });
    if (stale.length === 0) return;
    for (const { address, ttlSeconds } of stale) entry.pins.set(address, { name, expiresAtMs: now + ttlSeconds * 1000 });
    if (this.vms.get(entry.vmId) === entry) await this.nft(pinScript(this.options.table, entry.key, stale));
  }

  private async decide(entry: VmEntry, request: EgressRequest): Promise<EgressDecision> {
    const policy = entry.policy;
    if (!allowsScheme(policy, request.scheme)) return { allowed: false, reason: `${request.scheme} is closed by the egress policy` };
    let address: string;
    if (request.literalAddress) {
      if (!allowsAddress(policy, request.literalAddress)) return { allowed: false, reason: 'address not in allowed_cidrs' };
      address = request.literalAddress;
    } else if (request.name) {
      if (!allowsName(policy, request.name)) return { allowed: false, reason: 'name not allowed by the egress policy' };
      const now = Date.now();
      const pinned = [...entry.pins].find(([, pin]) => pin.name === request.name && pin.expiresAtMs > now)?.[0];
      if (pinned) address = pinned;
      else {
        // The guest did not ask our resolver (a hosts file, curl --resolve): resolve the name it sent instead,
        // so a forged address for an allowed name is never what we connect to.
        const records = await lookupA(request.name, this.upstreams);
        if (!records.length) return { allowed: false, reason: 'the name has no IPv4 address' };
        await this.pin(entry, request.name, records);
        address = records[0]!.address;
      }
    } else {
      return { allowed: false, reason: request.scheme === 'https' ? 'no server name (SNI) in the TLS ClientHello' : 'no Host header' };
    }
    const forbidden = forbiddenAddressReason(address) ?? (isHostAddress(address) ? 'host' : null);
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
    const refusedWeb = attempt.verdict === 'refused' && attempt.protocol === 'tcp' && (attempt.port === 80 || attempt.port === 443);
    this.report(entry, {
      protocol: attempt.protocol,
      scheme: null,
      name: entry.pins.get(attempt.address)?.name ?? null,
      address: attempt.address,
      port: attempt.port,
      bytesSent: null,
      bytesReceived: null,
      verdict: attempt.verdict,
      reason: attempt.verdict === 'allowed' ? null : refusedWeb ? `${attempt.port === 80 ? 'http' : 'https'} is closed by the egress policy` : 'address not pinned by an allowed name nor in allowed_cidrs',
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
