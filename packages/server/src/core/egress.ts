/**
 * Egress policies of VMs and sessions, and the egress audit log. A VM's policy is, in order: its own (set at
 * create or by PUT, also while it starts), its session's when it started, or the deployment's default. Where the
 * policy is restricted it is enforced on the host by the `EgressEnforcement` port (`net/egress/`), which reports
 * every connection attempt; those are logged per VM, and refusals become `egress.refused` events, at most one
 * per VM per `refusedEventIntervalMs` (each with the count of refusals since the last), so a guest in a refusing
 * loop cannot flood webhooks.
 *
 * A VM's rules are in place before anything in it runs: the VM service's network hook applies the policy while a
 * restored or resumed VM is still paused in its new hypervisor's cgroup (a pooled VM: before its link comes up),
 * so a process left running in a snapshot meets the policy with its first packet.
 */
import { EventEmitter } from 'node:events';
import type { Principal } from './authenticator.ts';
import { BackgroundTimers, type BackgroundFailures } from './background-timers.ts';
import type { Clock } from './clock.ts';
import { decodeCursor, pageOf } from './cursor.ts';
import {
  isOpenEgressPolicy,
  normalizeEgressPolicy,
  storedEgressPolicy,
  type EgressPolicy,
  type EgressPolicyInput,
  type EgressPolicySource,
  type EgressPolicyView,
} from './egress-policy.ts';
import { AppError } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import type { Session, Vm } from '../model.ts';
import type { SessionService } from './sessions.ts';
import type { EgressTarget, VmEngine } from './vm-engine.ts';
import type { VmService } from './vms/index.ts';
import type { Database } from '../store/database.ts';
import {
  findEgressPolicy,
  findVmEgressPolicies,
  insertEgressLog,
  listEgressLog,
  pruneEgressLog,
  upsertEgressPolicy,
  type EgressLogEntry,
} from '../store/egress-store.ts';
import { findVm, findVms } from '../store/vms-store.ts';
import type { EgressAttempt, EgressLogRecord } from '../activity.ts';
import type { Ownership } from './cluster/ownership.ts';
import type { RemoteNodes } from './cluster/remote-nodes.ts';
import { LogBuffer } from './log-buffer.ts';

/** One connection attempt, as the enforcement reports it. */
export type EgressAttemptReport = EgressAttempt;

/** What enforces policies on this node's VMs (the host firewall, resolver and proxy). */
export interface EgressEnforcement {
  start(): Promise<void>;
  apply(vmId: string, target: EgressTarget, policy: EgressPolicy): Promise<void>;
  remove(vmId: string): Promise<void>;
  /** VMs it enforces a policy on now. */
  vmIds(): string[];
  /** Removes rules it holds for VMs it does not enforce (after re-applying the live ones at start). */
  reap(): Promise<unknown>;
  /** Closes the listeners; `dropRules` also removes every rule (no VM of this server lives on). */
  close(options: { dropRules: boolean }): Promise<void>;
}

export interface EgressOptions {
  defaultPolicy: EgressPolicy;
  retentionDays: number;
  refusedEventIntervalMs: number;
  /** How often live VMs are reconciled with their policies (re-adopted VMs, ended ones). */
  reconcileIntervalMs: number;
  /** Where the log writes, the reconcile loop and the retention report their failures. */
  failures: BackgroundFailures;
}

/**
 * How long a VM may be starting with its rules applied before the reconcile pass treats it as gone (a start that
 * failed without telling: its rules then go). Longer than any restore (60 s under TCG) plus its ready hooks.
 */
const STARTING_GRACE_MS = 10 * 60_000;

/**
 * Where VMs run: `ownership` tells this node's from the others', and `remote` (cluster mode) reaches the node
 * that runs a VM, which holds its rules and knows whether they are enforced.
 */
export interface EgressCluster {
  ownership: Ownership;
  remote: RemoteNodes | null;
}

/** The vault, as egress sees it: a VM whose session holds placeholders goes through the proxy whatever its policy. */
export interface EgressVaultSessions {
  sessionHasVault(sessionId: string): Promise<boolean>;
  forget(vmId: string): void;
}

interface EnforcedVm {
  userId: number;
  sessionId: string | null;
  policy: EgressPolicy;
  target: EgressTarget;
}

export class EgressService {
  /** Live VMs of this node whose policy is known: the enforced ones and the open ones. */
  private readonly known = new Map<string, EnforcedVm | { userId: number; sessionId: string | null; policy: EgressPolicy; target: null }>();
  /**
   * VMs whose rules were applied while they start (not live in the engine yet), by when: the reconcile pass must
   * not take them for ended ones. Cleared by the ready or resumed hook, or when the start fails.
   */
  private readonly starting = new Map<string, { sinceMs: number; target: EgressTarget | null }>();
  private readonly pendingLog = new LogBuffer<EgressLogEntry>();
  private readonly refusals = new Map<string, { lastEventMs: number; suppressed: number }>();
  private readonly timers: BackgroundTimers;
  /** Every decision on a VM's connection attempt, allowed or refused, as the enforcement reports it (the metrics count them). */
  readonly decisions = new EventEmitter<{ decision: [verdict: EgressAttemptReport['verdict']] }>();
  private reconciling: Promise<void> | null = null;
  private started: Promise<void> | null = null;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly events: EventNotifier,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly engine: VmEngine,
    private readonly enforcement: EgressEnforcement | null,
    private readonly options: EgressOptions,
    private readonly vault: EgressVaultSessions | null,
    private readonly cluster: EgressCluster,
  ) {
    this.timers = new BackgroundTimers(options.failures);
    engine.onVmEnded((vmId) => void this.forget(vmId));
  }

  /**
   * The VM's egress rules before it runs (readiness.ts `beforeRun`): a restored VM is still paused, a pooled one
   * has its link down. A failure fails the start.
   */
  async beforeRun(vm: Vm, kind: 'new' | 'resumed', target: EgressTarget | null): Promise<void> {
    const { policy } = kind === 'new' ? await this.policyOfNewVm(vm) : await this.policyOfVmRecord(vm);
    this.starting.set(vm.id, { sinceMs: Date.now(), target });
    await this.enforce(vm.id, vm.userId, vm.sessionId, policy, { target });
  }

  /** A start or resume failed after `beforeRun` may have run: rules of a VM that does not run go. */
  startFailed(vmId: string): void {
    if (this.starting.delete(vmId) && !this.engine.liveVmIds().includes(vmId)) void this.forget(vmId).catch(() => undefined);
  }

  /** A resumed VM got its policy while paused (`beforeRun`); a PUT during the resume is applied here. */
  async resumed(vm: Vm): Promise<void> {
    this.starting.delete(vm.id);
    const { policy } = await this.policyOfVmRecord(vm);
    if (!this.sameAsEnforced(vm.id, policy)) await this.enforce(vm.id, vm.userId, vm.sessionId, policy);
  }

  /** Whether this server enforces restricted policies (and so accepts them, and `vault_ids`). */
  get enforces(): boolean {
    return this.enforcement !== null;
  }

  /** The default of the deployment (for session and VM creation). */
  get defaultPolicy(): EgressPolicy {
    return this.options.defaultPolicy;
  }

  /**
   * Validates a policy from a create request (canonical lists; `AppError('BAD_REQUEST')` on a bad entry), and
   * refuses a restricted one up front where this server cannot enforce it (503), before any VM starts.
   */
  normalize(policy: EgressPolicyInput): EgressPolicy {
    const normalized = normalizeEgressPolicy(policy);
    if (!this.enforcement && !isOpenEgressPolicy(normalized)) throw this.notEnforceable();
    return normalized;
  }

  private notEnforceable(): AppError {
    return new AppError(
      'SERVICE_UNAVAILABLE',
      'egress policies are not enforced on this server (needs root, nftables and cgroup v2): only the open policy is possible',
    );
  }

  /**
   * Re-applies the policies of the VMs the engine re-adopted after a restart and reaps the rules of VMs that
   * are gone: call once the engine has recovered (main.ts, after `vms.start()`). Never starts the engine itself.
   */
  async recover(): Promise<void> {
    if (!this.enforcement) return;
    await this.enforcement.start();
    await this.reconcile();
    await this.enforcement.reap();
  }

  /**
   * Runs the timers: log writes, retention, and the reconcile loop that follows VMs re-adopted without a ready
   * hook and drops ended ones (it reads the engine, never starts it).
   */
  start(): Promise<void> {
    this.started ??= (async () => {
      this.timers.every('egress_log_write', 250, () => this.flushLog());
      if (this.enforcement) this.timers.every('egress_reconcile', this.options.reconcileIntervalMs, () => this.reconcile());
      this.timers.every('egress_log_retention', 3600_000, () => this.prune());
      await this.prune();
    })();
    return this.started;
  }

  /** Stops the timers and the listeners; `vmsKept`: the VMs live on, so their rules stay (failing closed). */
  async stop({ vmsKept }: { vmsKept: boolean }): Promise<void> {
    this.timers.clear();
    await this.flushLog().catch((error: unknown) => this.options.failures.report('egress_log_write', error));
    await this.enforcement?.close({ dropRules: !vmsKept });
  }

  /** Records a new session's policy (its VMs copy it when they start). */
  async setInitialSessionPolicy(session: Session, policy: EgressPolicy): Promise<void> {
    await upsertEgressPolicy(this.database.db, 'session', session.id, session.userId, JSON.stringify(policy), this.clock.now().toISOString());
  }

  private async storedPolicy(kind: 'vm' | 'session', id: string): Promise<EgressPolicy | undefined> {
    const json = await findEgressPolicy(this.database.db, kind, id);
    return json ? storedEgressPolicy(json) : undefined;
  }

  private async policyOfVmRecord(vm: Vm): Promise<{ policy: EgressPolicy; source: EgressPolicySource }> {
    const own = await this.storedPolicy('vm', vm.id);
    if (own) return { policy: own, source: 'vm' };
    return { policy: this.options.defaultPolicy, source: 'default' };
  }

  /**
   * The policy a new VM starts with: its own stored one (given at create, stored with the reservation, or a PUT
   * made while it starts, which replaces it: the later wins), else its session's, else the default.
   */
  private async policyOfNewVm(vm: Vm): Promise<{ policy: EgressPolicy; fromVm: boolean; explicit: boolean }> {
    const own = await this.storedPolicy('vm', vm.id);
    if (own) return { policy: own, fromVm: true, explicit: true };
    const given = vm.sessionId ? await this.storedPolicy('session', vm.sessionId) : undefined;
    return given ? { policy: given, fromVm: false, explicit: true } : { policy: this.options.defaultPolicy, fromVm: false, explicit: false };
  }

  /** Whether `policy` is what this node enforces on the VM now (so applying it again would change nothing). */
  private sameAsEnforced(vmId: string, policy: EgressPolicy): boolean {
    const known = this.known.get(vmId);
    return known !== undefined && JSON.stringify(known.policy) === JSON.stringify(policy);
  }

  /**
   * The `egress` ready step of a new VM (readiness.ts). Its policy was applied before it ran (`beforeRun`); it is
   * recorded as the VM's own now, and applied again only when it changed meanwhile (a PUT accepted while the VM
   * started wins: L-5). A policy that cannot be enforced kills the VM (fail closed).
   */
  async readyForSession(vm: Vm): Promise<void> {
    const { policy, fromVm, explicit } = await this.policyOfNewVm(vm);
    this.starting.delete(vm.id);
    if (explicit && !fromVm) await upsertEgressPolicy(this.database.db, 'vm', vm.id, vm.userId, JSON.stringify(policy), this.clock.now().toISOString());
    if (this.sameAsEnforced(vm.id, policy)) return;
    try {
      await this.enforce(vm.id, vm.userId, vm.sessionId, policy);
    } catch (error) {
      // Fail closed: a VM whose policy cannot be enforced must not run open (its session records the end).
      await this.engine.kill(vm.id).catch(() => undefined);
      throw error;
    }
  }

  /** Refuses up front what this server cannot do: the vault needs the egress proxy (503 otherwise). */
  requireEnforcement(feature: string): void {
    if (!this.enforcement)
      throw new AppError('SERVICE_UNAVAILABLE', `${feature} needs egress enforcement, which this server does not have (needs root, nftables and cgroup v2)`);
  }

  /**
   * Enforces `policy` on a live VM of this node (or lifts enforcement when it is open). A VM whose session
   * holds vault placeholders is enforced under an open policy too: its web traffic must pass the proxy.
   */
  private async enforce(
    vmId: string,
    userId: number,
    sessionId: string | null,
    policy: EgressPolicy,
    starting?: { target: EgressTarget | null },
  ): Promise<boolean> {
    const vaulted = sessionId !== null && this.vault !== null && (await this.vault.sessionHasVault(sessionId));
    if (isOpenEgressPolicy(policy) && !vaulted) {
      this.known.set(vmId, { userId, sessionId, policy, target: null });
      await this.enforcement?.remove(vmId);
      return false;
    }
    if (!this.enforcement) throw this.notEnforceable();
    let target: EgressTarget | null;
    if (starting) target = starting.target;
    else {
      // A VM still starting is not live in the engine yet; its hypervisor's cgroup came with the network hook.
      target = (await this.engine.egressTarget(vmId)) ?? this.starting.get(vmId)?.target ?? null;
      if (!target && !this.starting.has(vmId) && !this.engine.liveVmIds().includes(vmId)) return false; // not running here: applied when it runs again
    }
    if (!target)
      throw new AppError('SERVICE_UNAVAILABLE', `the egress policy cannot be enforced on VM ${vmId}: its hypervisor has no cgroup v2 the firewall can match`);
    await this.enforcement.apply(vmId, target, policy);
    this.known.set(vmId, { userId, sessionId, policy, target });
    return true;
  }

  private async forget(vmId: string): Promise<void> {
    this.known.delete(vmId);
    this.starting.delete(vmId);
    this.refusals.delete(vmId);
    this.vault?.forget(vmId);
    await this.enforcement?.remove(vmId);
  }

  /**
   * Brings enforcement in line with the live VMs: VMs that ended lose their rules, and VMs running without them
   * (re-adopted after a restart) get their policy applied. Two queries a pass, whatever the number of VMs.
   */
  private reconcile(): Promise<void> {
    this.reconciling ??= (async () => {
      const live = new Set(this.engine.liveVmIds());
      const now = Date.now();
      for (const [vmId, { sinceMs }] of this.starting) if (now - sinceMs > STARTING_GRACE_MS && !live.has(vmId)) this.starting.delete(vmId);
      for (const vmId of [...this.known.keys(), ...(this.enforcement?.vmIds() ?? [])]) if (!live.has(vmId) && !this.starting.has(vmId)) await this.forget(vmId);
      const unknown = [...live].filter((id) => !this.known.has(id) && !this.starting.has(id));
      if (unknown.length === 0) return;
      const [stored, records] = await Promise.all([findVmEgressPolicies(this.database.db, unknown), findVms(this.database.db, unknown)]);
      for (const vmId of unknown) {
        const vm = records.get(vmId);
        if (!vm) continue; // a pooled VM nobody owns yet: its policy comes with its owner
        const json = stored.get(vmId);
        await this.enforce(vmId, vm.userId, vm.sessionId, json ? storedEgressPolicy(json) : this.options.defaultPolicy).catch((error: unknown) =>
          this.options.failures.report('egress_reconcile', error),
        ); // retried on the next pass
      }
    })().finally(() => (this.reconciling = null));
    return this.reconciling;
  }

  async getVmPolicy(principal: Principal, vmId: string): Promise<EgressPolicyView> {
    const vm = await this.vms.getOwned(principal, vmId);
    // Whether it is enforced is known by the node that runs it.
    if (this.onOtherNode(vm)) return this.forward(vm, principal, null);
    const { policy, source } = await this.policyOfVmRecord(vm);
    return { policy, source, enforced: this.enforcement?.vmIds().includes(vm.id) ?? false };
  }

  private onOtherNode(vm: Vm): boolean {
    return this.cluster.remote !== null && !this.cluster.ownership.isLocal(vm) && vm.status !== 'killed';
  }

  /** Runs a VM's policy read (`policy` null) or change on the node that runs it, for `principal` (checked there again). */
  private forward(vm: Vm, principal: Principal, policy: EgressPolicy | null): Promise<EgressPolicyView> {
    return this.cluster.remote!.command(vm.nodeId, { op: 'egress.policy', principal, vm_id: vm.id, policy });
  }

  /**
   * Replaces a VM's policy; a running VM follows it for its next connection. A VM on another node of the
   * cluster is changed there (the node that runs it holds its firewall rules).
   */
  async setVmPolicy(principal: Principal, vmId: string, requested: EgressPolicyInput): Promise<EgressPolicyView> {
    const vm = await this.vms.getOwned(principal, vmId);
    const policy = this.normalize(requested);
    if (vm.status === 'killed') throw new AppError('CONFLICT', `VM ${vm.id} has ended: its egress policy can no longer change`);
    if (this.onOtherNode(vm)) return this.forward(vm, principal, policy);
    this.cluster.ownership.assertLocal(vm, `VM ${vm.id} runs`);
    const store = () => upsertEgressPolicy(this.database.db, 'vm', vm.id, vm.userId, JSON.stringify(policy), this.clock.now().toISOString());
    if (this.engine.liveVmIds().includes(vm.id)) {
      const enforced = await this.enforce(vm.id, vm.userId, vm.sessionId, policy);
      await store();
      return { policy, source: 'vm', enforced };
    }
    // Not live (yet): stored first, so that a VM that is starting reads it when it becomes ready instead of the
    // policy it was created with (L-5); one whose rules were applied before it ran follows it at once.
    await store();
    const enforced = this.starting.has(vm.id) ? await this.enforce(vm.id, vm.userId, vm.sessionId, policy) : false;
    return { policy, source: 'vm', enforced };
  }

  async getSessionPolicy(principal: Principal, sessionId: string): Promise<{ policy: EgressPolicy; source: EgressPolicySource }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    const own = await this.storedPolicy('session', session.id);
    return own ? { policy: own, source: 'session' } : { policy: this.options.defaultPolicy, source: 'default' };
  }

  /** Replaces a session's policy: its future VMs start with it, and its running VM follows it now. */
  async setSessionPolicy(
    principal: Principal,
    sessionId: string,
    requested: EgressPolicyInput,
  ): Promise<{ policy: EgressPolicy; source: EgressPolicySource; updatedVmIds: string[] }> {
    const session = await this.sessions.getOwned(principal, sessionId);
    const policy = this.normalize(requested);
    await upsertEgressPolicy(this.database.db, 'session', session.id, session.userId, JSON.stringify(policy), this.clock.now().toISOString());
    const updatedVmIds: string[] = [];
    const vm = session.currentVmId ? await findVm(this.database.db, session.currentVmId) : undefined;
    if (vm && vm.status !== 'killed' && (this.cluster.ownership.isLocal(vm) || this.cluster.remote)) {
      await this.setVmPolicy(principal, vm.id, policy);
      updatedVmIds.push(vm.id);
    }
    return { policy, source: 'session', updatedVmIds };
  }

  /** Receives one attempt from the enforcement (buffered; written in batches). */
  record(attempt: EgressAttemptReport): void {
    this.decisions.emit('decision', attempt.verdict);
    const vm = this.known.get(attempt.vmId);
    if (!vm) return;
    this.pendingLog.push({
      vm_id: attempt.vmId,
      user_id: vm.userId,
      at: attempt.at.toISOString(),
      protocol: attempt.protocol,
      scheme: attempt.scheme,
      name: attempt.name,
      address: attempt.address,
      port: attempt.port,
      bytes_sent: attempt.bytesSent,
      bytes_received: attempt.bytesReceived,
      verdict: attempt.verdict,
      reason: attempt.reason,
    });
    if (attempt.verdict === 'refused')
      void this.refused(attempt, vm.userId, vm.sessionId).catch((error: unknown) => this.options.failures.report('egress_refusal_event', error));
  }

  private async refused(attempt: EgressAttemptReport, userId: number, sessionId: string | null): Promise<void> {
    const nowMs = this.clock.now().getTime();
    const state = this.refusals.get(attempt.vmId) ?? { lastEventMs: -Infinity, suppressed: 0 };
    this.refusals.set(attempt.vmId, state);
    if (nowMs - state.lastEventMs < this.options.refusedEventIntervalMs) {
      state.suppressed += 1;
      return;
    }
    const suppressed = state.suppressed;
    state.lastEventMs = nowMs;
    state.suppressed = 0;
    await recordEvent(this.database.db, this.clock, {
      type: 'egress.refused',
      userId,
      subjectId: attempt.vmId,
      data: {
        vm_id: attempt.vmId,
        session_id: sessionId,
        at: attempt.at.toISOString(),
        protocol: attempt.protocol,
        name: attempt.name,
        address: attempt.address,
        port: attempt.port,
        reason: attempt.reason,
        refusals_not_reported: suppressed,
      },
    });
    this.events.committed();
  }

  /**
   * Writes the buffered attempts. A batch the store refused goes back to the front of the buffer for the next
   * turn (the buffer keeps its newest 50,000 entries), and the failure is the caller's to report.
   */
  async flushLog(): Promise<void> {
    await this.pendingLog.writeBatch((batch) => insertEgressLog(this.database.db, batch));
  }

  async prune(): Promise<number> {
    return pruneEgressLog(this.database.db, new Date(this.clock.now().getTime() - this.options.retentionDays * 86_400_000).toISOString());
  }

  async listLog(
    principal: Principal,
    vmId: string,
    query: { verdict?: 'allowed' | 'refused'; since?: string; until?: string; destination?: string; cursor?: string; limit: number },
  ): Promise<{ items: EgressLogRecord[]; nextCursor: string | null }> {
    const vm = await this.vms.getOwned(principal, vmId);
    await this.flushLog();
    const rows = await listEgressLog(this.database.db, {
      vmId: vm.id,
      ...(query.verdict ? { verdict: query.verdict } : {}),
      ...(query.since ? { since: query.since } : {}),
      ...(query.until ? { until: query.until } : {}),
      ...(query.destination ? { destination: query.destination.toLowerCase() } : {}),
      ...(query.cursor ? { beforeId: decodeCursor(query.cursor) } : {}),
      limit: query.limit + 1,
    });
    return pageOf(rows, query.limit, (row) => row.id);
  }
}
