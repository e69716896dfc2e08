/**
 * The VM lifecycle of sessions: acquire on first use (or at once with prewarm, or by POST /v1/vms), reuse
 * while alive, record expiry and crashes, kill on request, and reconcile with the engine after a restart.
 * Every state change is written with its event in one transaction.
 */
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { AppError, notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { endInFlightExecutions, SHUT_DOWN_ERROR } from './executions.ts';
import { newSnapshotId, newVmId } from './ids.ts';
import type { PlanLimiter } from './limits.ts';
import { DEFAULT_TEMPLATE_ID, LIVE_VM_STATUSES, type LifecycleHooks, type PreStopHook, type PreStopTrigger, type Session, type SessionSpec, type Snapshot, type Vm, type VmEndReason, type VmStatus } from './model.ts';
import type { EgressPolicy } from './egress-policy.ts';
import type { AcquireEstimate, CaptureOutcome, EgressTarget, GuestAgent, VmEngine } from './vm-engine.ts';
import type { ResolvedSource, VmSources } from './vm-sources.ts';
import type { RemoteNodes } from './cluster/remote-nodes.ts';
import type { Placement } from './cluster/placement.ts';
import type { KillQueue } from './cluster/kill-queue.ts';
import { upsertEgressPolicy } from '../store/egress-store.ts';
import { findNode } from '../store/nodes-store.ts';
import { setTimeout as sleep } from 'node:timers/promises';

import type { Database } from '../store/database.ts';
import { findSession, updateSession } from '../store/sessions-store.ts';
import { completeSnapshot, deleteSnapshotRow, findSnapshot, insertSnapshot, listCreatingSnapshotsOfNode } from '../store/snapshots-store.ts';
import { isUniqueViolation } from '../store/users-store.ts';
import { findVm, insertVm, listLiveVmsOfNode, listLiveVmsOnDeadNodes, listVms, liveLoadByNode, transitionVm } from '../store/vms-store.ts';
import { vmHasVolumes } from '../store/volumes-store.ts';
import { lockUser } from './user-lock.ts';
import { attachVolumes, type VolumeRequest } from './volumes.ts';

/** How long POST /kill waits for the owner of a VM on another node to record its end. */
const REMOTE_KILL_WAIT_MS = 30_000;

export interface VmSpec {
  vcpuCount: number;
  memoryMb: number;
  lifetimeSeconds: number;
  /** What it starts from; default: its session's source. A snapshot fixes vCPUs and memory. */
  source?: ResolvedSource;
  name?: string | null;
  metadata?: Record<string, string>;
  /** Volumes to mount (checked and recorded with the reservation). */
  volumes?: VolumeRequest[];
  /** Its lifecycle hooks; default: its session's. */
  lifecycleHooks?: LifecycleHooks | null;
  /**
   * Its own egress policy (normalized; default: its session's). Stored with the reservation, in the same
   * transaction, on whichever node starts the VM: the network hook reads it there before the VM runs.
   */
  egressPolicy?: EgressPolicy;
  /** Called once the VM is reserved in the store ('starting'), before the engine starts it. */
  onReserved?: (vm: Vm) => void;
}

/** What an execution that was running when its VM was paused is recorded with. */
export const PAUSED_ERROR = 'the VM was paused while the execution ran; its process goes on when the VM resumes, but its output from then on is not recorded';

/** A session's live VM with its agent. */
export interface LiveVm {
  vm: Vm;
  agent: GuestAgent;
}

/** Hooks run right after a session gets a new VM (e.g. apply the session's env to its Python context). */
export type VmReadyHook = (session: Session, live: LiveVm) => Promise<void>;

/**
 * Hooks run before a starting VM can send anything (`AcquireVmRequest.prepareNetwork`): `new` for a VM just
 * reserved, `resumed` for a paused VM coming back. `target` is how the firewall knows its hypervisor (null: it
 * cannot here). A rejection fails the start.
 */
export type VmNetworkHook = (vm: Vm, kind: 'new' | 'resumed', target: EgressTarget | null) => Promise<void>;

/** Runs a VM's pre-stop hook in it and records the run (ExecutionService); bounded by the hook's timeout, never throws. */
export type PreStopRunner = (vm: Vm, agent: GuestAgent, hook: PreStopHook, stop: PreStopTrigger) => Promise<unknown>;

export class VmService {
  /** One acquisition at a time per session, so concurrent executes share one new VM. */
  private readonly acquiring = new Map<string, Promise<LiveVm>>();
  private readyHooks: VmReadyHook[] = [];
  private resumedHooks: ((vm: Vm) => Promise<void>)[] = [];
  private networkHooks: VmNetworkHook[] = [];
  private startFailedHooks: ((vmId: string) => void)[] = [];
  private started: Promise<{ adopted: number; ended: number }> | undefined;
  /** The store reconciled with what the engine re-adopted after a restart (see `reconciled`). */
  private reconciling: Promise<{ adopted: number; ended: number }> | undefined;
  /**
   * Ends being carried out or recorded (engine reports, kills), by VM: a request that finds such a VM no
   * longer live waits for its record instead of starting a second VM beside one that is still recorded live.
   */
  private readonly ending = new Map<string, Promise<unknown>>();
  /** Pre-stop hooks running, by VM: a second stop while one runs waits for it instead of running it again. */
  private readonly preStopping = new Map<string, Promise<void>>();
  private preStopRunner: PreStopRunner | null = null;

  constructor(
    private readonly database: Database,
    private readonly engine: VmEngine,
    private readonly limiter: PlanLimiter,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly sources: VmSources,
    /** Agents of VMs on other nodes of the cluster, and VMs started there (absent: every VM is on this node). */
    private readonly remote: RemoteNodes | null = null,
    /** Where new VMs go (absent: always this node). */
    private readonly placement: Placement | null = null,
    /** Where kills of VMs on other nodes go (cluster mode). */
    private readonly killQueue: KillQueue | null = null,
  ) {
    engine.onVmEnded((vmId, reason) => {
      this.trackEnd(vmId, this.recordEnd(vmId, reason)).catch(() => {});
    });
    engine.onBeforeExpiry(async (vmId) => {
      const vm = await findVm(this.database.db, vmId);
      if (vm?.status === 'active') await this.preStop(vm, 'lifetime');
    });
  }

  /**
   * Starts the engine and reconciles the store with it (VMs recorded live that did not survive a restart are
   * marked ended); once, before the first acquisition. main.ts calls it at start to warm up.
   */
  start(): Promise<{ adopted: number; ended: number }> {
    this.started ??= Promise.all([this.engine.start(), this.reconciled()]).then(([, counts]) => counts);
    this.started.catch(() => {
      this.started = undefined; // let the next acquisition retry
    });
    return this.started;
  }

  /**
   * Resolves once the engine re-adopted what an earlier process left and the store agrees with it. Until
   * then a VM recorded live on this node may still come back, so nothing may treat it as gone (an
   * execute_async answered before the engine was up once recorded a VM about to be re-adopted as crashed).
   */
  private reconciled(): Promise<{ adopted: number; ended: number }> {
    this.reconciling ??= this.engine.recovered().then(async () => {
      await this.dropUnfinishedSnapshots();
      return this.reconcile();
    });
    this.reconciling.catch(() => {
      this.reconciling = undefined;
    });
    return this.reconciling;
  }

  /** The node this service runs VMs (and executions) on. */
  get nodeId(): string {
    return this.engine.nodeId;
  }

  onVmReady(hook: VmReadyHook): void {
    this.readyHooks.push(hook);
  }

  /** Runs `hook` before each VM of this node starting or resuming can send anything (see `VmNetworkHook`). */
  onVmNetwork(hook: VmNetworkHook): void {
    this.networkHooks.push(hook);
  }

  /** Runs `hook` when a start or resume on this node failed after its network hooks may have run. */
  onVmStartFailed(hook: (vmId: string) => void): void {
    this.startFailedHooks.push(hook);
  }

  private async prepareNetwork(vm: Vm | undefined, kind: 'new' | 'resumed', target: EgressTarget | null): Promise<void> {
    if (!vm) throw new AppError('VM_UNAVAILABLE', 'the VM ended while it was starting');
    for (const hook of this.networkHooks) await hook(vm, kind, target);
  }

  private startFailed(vmId: string): void {
    for (const hook of this.startFailedHooks) {
      try {
        hook(vmId);
      } catch {
        // a listener's failure must not hide the start's own error
      }
    }
  }

  /**
   * Hooks run right after a paused VM runs again, before its caller gets it (its hypervisor is a new process:
   * what was bound to the old one, like egress rules, is bound again). A hook that throws kills the VM.
   */
  onVmResumed(hook: (vm: Vm) => Promise<void>): void {
    this.resumedHooks.push(hook);
  }

  /** Who runs pre-stop hooks (the execution service, so each run is an execution record); until set, none run. */
  setPreStopRunner(runner: PreStopRunner): void {
    this.preStopRunner = runner;
  }

  /**
   * Runs the VM's pre-stop hook, if it has one and its agent is here to run it, before a stop that was asked
   * for (`stop`): once per stop, a concurrent stop of the same VM waits for the same run. Resolves when the
   * hook ended or timed out (the runner bounds it); never rejects, so the stop always goes on.
   */
  private preStop(vm: Vm, stop: PreStopTrigger): Promise<void> {
    const hook = vm.lifecycleHooks?.preStop;
    if (!hook || !this.preStopRunner) return Promise.resolve();
    const running = this.preStopping.get(vm.id);
    if (running) return running;
    const agent = this.agentOf(vm);
    if (!agent) return Promise.resolve();
    const work = this.preStopRunner(vm, agent, hook, stop).then(
      () => {},
      () => {},
    );
    this.preStopping.set(vm.id, work);
    void work.then(() => this.preStopping.delete(vm.id));
    return work;
  }

  /**
   * The session's VM if it is alive, else a new one (the previous one expired, was killed, or never existed).
   * A VM whose agent does not answer is still the session's VM: its errors are the caller's answer, and it
   * is replaced only after its end is recorded (the engine kills a VM whose agent link cannot be restored).
   */
  async ensureVm(principal: Principal, session: Session): Promise<LiveVm> {
    await this.ensureStarted();
    const joined = this.acquiring.get(session.id);
    if (joined) return joined;
    // A paused VM is the session's VM: it is resumed, never replaced.
    const paused = await this.pausedVmOf(session);
    if (paused) return this.joinAcquisition(session.id, () => this.resumeFor(principal, paused));
    const current = this.acquiring.get(session.id) ?? (await this.liveVmOf(session));
    if (current) return current;
    return this.joinAcquisition(session.id, () =>
      this.acquireFor(principal, session, { vcpuCount: session.vcpuCount, memoryMb: session.memoryMb, lifetimeSeconds: session.vmLifetimeSeconds }),
    );
  }

  /** One acquisition (or resume) at a time per session: later callers share it. */
  private joinAcquisition(sessionId: string, start: () => Promise<LiveVm>): Promise<LiveVm> {
    const pending = this.acquiring.get(sessionId);
    if (pending) return pending;
    const acquisition = start().finally(() => this.acquiring.delete(sessionId));
    this.acquiring.set(sessionId, acquisition);
    return acquisition;
  }

  /** The session's current VM while it is paused, else undefined. */
  private async pausedVmOf(session: Session): Promise<Vm | undefined> {
    const vmId = (await findSession(this.database.db, session.id))?.currentVmId ?? session.currentVmId;
    const vm = vmId ? await findVm(this.database.db, vmId) : undefined;
    return vm?.status === 'paused' ? vm : undefined;
  }

  /**
   * How long a caller would wait for the VM of `session` (or of a new session with this spec) if it asked
   * now: null when the session has a live VM or one is already on its way (it shares that one).
   */
  async admission(session: Session | (SessionSpec & { id?: undefined })): Promise<AcquireEstimate | null> {
    if (session.id !== undefined && (this.acquiring.has(session.id) || (await this.liveVmOf(session)))) return null;
    // A source other than the built-in template restores without the pool: the estimate says so.
    const source = session.source.kind === 'template' && session.source.id === DEFAULT_TEMPLATE_ID ? undefined : ({ kind: 'snapshot', snapshotId: '', diskSizeMb: 0 } as const);
    return this.engine.estimateAcquire({ vcpuCount: session.vcpuCount, memoryMb: session.memoryMb, ...(source ? { source } : {}) });
  }

  /** POST /v1/vms: bind a new VM to a session that has none alive. */
  /** 409 unless a new VM may start for the session now (none of it is running, starting or paused). */
  async checkCanStart(session: Session): Promise<void> {
    if (await this.pausedVmOf(session)) throw new AppError('CONFLICT', `session ${session.id} has a paused VM; resume it or kill it first`);
    if (this.acquiring.has(session.id) || (await this.liveVmOf(session))) {
      throw new AppError('CONFLICT', `session ${session.id} already has a running VM; kill it first (POST /kill)`);
    }
  }

  async createForSession(principal: Principal, session: Session, spec: VmSpec): Promise<LiveVm> {
    await this.checkCanStart(session);
    return this.joinAcquisition(session.id, () => this.acquireFor(principal, session, spec));
  }

  async getOwned(principal: Principal, vmId: string): Promise<Vm> {
    const vm = await findVm(this.database.db, vmId);
    if (!vm || vm.userId !== principal.userId) throw notFound(`VM ${vmId}`);
    return vm;
  }

  async list(principal: Principal, limit: number, status?: VmStatus): Promise<Vm[]> {
    return listVms(this.database.db, principal.userId, limit, status ? { status } : {});
  }

  /** The live agent of a VM row, or null. */
  agentOf(vm: Vm): GuestAgent | null {
    if (vm.status !== 'active') return null;
    if (vm.nodeId !== this.engine.nodeId && this.remote) return this.remote.agentOf(vm);
    return this.engine.agent(vm.id);
  }

  /**
   * Kills a VM the caller owns. Answers with the killed row; a VM that is not running is a 404 (nothing to
   * kill), as the spec's /kill does for "no VM assigned".
   */
  async kill(principal: Principal, vm: Vm): Promise<Vm> {
    if (vm.userId !== principal.userId) throw notFound(`VM ${vm.id}`);
    if (vm.status === 'paused') {
      // Nothing runs: its saved memory and disk go, and the record says it was killed.
      this.localOrThrow(vm);
      const ended = await this.recordEnd(vm.id, 'killed', ['paused']);
      if (ended) await this.engine.discardPause(vm.id);
      return ended ?? (await findVm(this.database.db, vm.id))!;
    }
    if (!(LIVE_VM_STATUSES as readonly VmStatus[]).includes(vm.status)) throw new AppError('NOT_FOUND', `VM ${vm.id} is not running (status ${vm.status})`);
    if (vm.nodeId !== this.engine.nodeId && this.killQueue) return this.killElsewhere(vm);
    const ended = await this.end(vm.id, 'killed', vm);
    return ended ?? (await findVm(this.database.db, vm.id))!;
  }

  /** Kills a VM of this node and records its end (the kill queue's work for kills dispatched here). */
  async killHere(vmId: string): Promise<void> {
    await this.end(vmId, 'killed', await findVm(this.database.db, vmId));
  }

  /**
   * A VM of another node: its kill goes to the owner's queue (the owner kills it and records the end), and the
   * answer waits for that record. A VM whose node is not live cannot be killed there: it is recorded lost.
   */
  private async killElsewhere(vm: Vm): Promise<Vm> {
    const node = await findNode(this.database.db, vm.nodeId);
    if (!node || node.state !== 'live') return (await this.recordEnd(vm.id, 'node_lost')) ?? (await findVm(this.database.db, vm.id))!;
    await this.killQueue!.dispatch(vm.nodeId, { vmId: vm.id, from: this.engine.nodeId });
    const deadline = Date.now() + REMOTE_KILL_WAIT_MS;
    for (;;) {
      const row = await findVm(this.database.db, vm.id);
      if (!row || row.status === 'killed') return row ?? vm;
      if (Date.now() > deadline) throw new AppError('VM_UNAVAILABLE', `the kill of VM ${vm.id} was dispatched to node ${vm.nodeId}'s queue but not confirmed within ${REMOTE_KILL_WAIT_MS / 1000} s; it will be carried out when that node works its queue`);
      await sleep(100);
    }
  }

  /**
   * A graceful stop of this node: every VM it runs is killed and recorded ended (`server_shutdown`, with its
   * event). Called before the engine closes, and again after it (a VM whose acquisition finished in between
   * was killed by the engine as it closed, and is recorded then). Not called when VMs are kept for the next
   * start to re-adopt. Answers how many it ended.
   */
  async stop(): Promise<number> {
    const rows = await listLiveVmsOfNode(this.database.db, this.engine.nodeId);
    const ended = await Promise.all(rows.map((row) => this.end(row.id, 'server_shutdown')));
    return ended.filter(Boolean).length;
  }

  /** What a node (default this one) runs now, by the store (a node's heartbeat reports its own). */
  async nodeLoad(nodeId: string = this.engine.nodeId): Promise<{ runningVms: number; usedVcpus: number; usedMemoryMb: number }> {
    const load = (await liveLoadByNode(this.database.db, nodeId)).get(nodeId);
    return { runningVms: load?.vms ?? 0, usedVcpus: load?.vcpus ?? 0, usedMemoryMb: load?.memoryMb ?? 0 };
  }

  /**
   * VMs recorded live on nodes the cluster declared dead are recorded ended (`node_lost`, event `vm.lost`), so
   * their sessions start new VMs elsewhere and quotas free up. Idempotent (each end is recorded once, by
   * whichever node gets there first). Answers how many this call recorded.
   */
  async recordLostVms(): Promise<number> {
    const rows = await listLiveVmsOnDeadNodes(this.database.db);
    const ended = await Promise.all(rows.map((row) => this.recordEnd(row.id, 'node_lost')));
    return ended.filter(Boolean).length;
  }

  /**
   * This node was declared dead while it was running (a pause longer than the heartbeat timeout): the VMs the
   * store recorded lost must not run on unseen, so they are killed here. Answers how many.
   */
  async killForsaken(): Promise<number> {
    const live = new Set((await listLiveVmsOfNode(this.database.db, this.engine.nodeId)).map((vm) => vm.id));
    const forsaken = this.engine.liveVmIds().filter((id) => !live.has(id));
    await Promise.all(forsaken.map((id) => this.engine.kill(id)));
    return forsaken.length;
  }

  /** After a restart: VMs the store thinks are live on this node but the engine does not have are over. */
  private async reconcile(): Promise<{ adopted: number; ended: number }> {
    const live = new Set(this.engine.liveVmIds());
    const rows = await listLiveVmsOfNode(this.database.db, this.engine.nodeId);
    let ended = 0;
    for (const row of rows) {
      if (live.has(row.id) && row.status === 'active') continue;
      // Handed out by the engine but never recorded active: the acquisition that wanted it is gone.
      if (live.has(row.id)) await this.engine.kill(row.id);
      const expired = Date.parse(row.expiresAt) <= this.clock.now().getTime();
      await this.recordEnd(row.id, expired ? 'expired' : 'server_restart');
      ended += 1;
    }
    // Engine VMs the store does not know as live (e.g. a crash between spawn and commit) must not linger.
    const known = new Set(rows.map((r) => r.id));
    for (const id of live) if (!known.has(id)) await this.engine.kill(id);
    return { adopted: rows.length - ended, ended };
  }

  /**
   * The session's current VM while it lives here; null when it has ended (or there is none), so that a new
   * one may start. A VM still recorded live is never passed over: it is returned, waited for until its end is
   * recorded, or answered with an error.
   */
  private async liveVmOf(session: Session): Promise<LiveVm | null> {
    await this.ensureStarted(this.reconciled());
    // The record, not the caller's copy: another request may have bound a new VM since that was read.
    const vmId = (await findSession(this.database.db, session.id))?.currentVmId ?? session.currentVmId;
    const vm = vmId ? await findVm(this.database.db, vmId) : undefined;
    // A paused VM is not live, and not to be replaced either: the callers that could start one check for it first.
    if (!vm || vm.status === 'killed' || vm.status === 'paused') return null;
    if (vm.nodeId !== this.engine.nodeId && this.remote) {
      // Its node runs it, enforces its lifetime and records its end; this one reaches it through that node.
      if (vm.status === 'starting') throw new AppError('VM_UNAVAILABLE', `the session's VM ${vm.id} is still starting on node ${vm.nodeId}: retry`);
      return { vm, agent: this.remote.agentOf(vm) };
    }
    if (vm.nodeId !== this.engine.nodeId) {
      throw new AppError('VM_UNAVAILABLE', `the session's VM ${vm.id} runs on node ${vm.nodeId}, not on this one (${this.engine.nodeId}): send the session's requests to that node`);
    }
    // An acquisition of this process is joined by ensureVm; a 'starting' record left by a process that died
    // was ended when this one started.
    if (vm.status === 'starting') throw new AppError('VM_UNAVAILABLE', `the session's VM ${vm.id} is still starting: retry`);
    if (Date.parse(vm.expiresAt) <= this.clock.now().getTime()) {
      // Its deadline is due (the engine's timer fires about now, or its pre-stop hook runs): end it here rather
      // than run code in it; a hook already running is waited for, not run again.
      await this.end(vm.id, 'expired', vm);
      return null;
    }
    const agent = this.engine.agent(vm.id);
    if (agent) return { vm, agent };
    // Recorded active but no longer live here: the engine reported its end before letting go of it, so that
    // end is being recorded now. Without one (which the engine does not do), it is gone unexplained: crashed.
    const ending = this.ending.get(vm.id);
    if (ending) await ending.catch(() => {});
    else await this.recordEnd(vm.id, 'crashed');
    return null;
  }

  /** Starts the engine (once) and reconciles the store with it; a failure is the caller's 503. */
  private async ensureStarted(started: Promise<unknown> = this.start()): Promise<void> {
    try {
      await started;
    } catch (error) {
      throw new AppError('VM_UNAVAILABLE', `the VM engine could not start: ${(error as Error).message}`);
    }
  }

  /**
   * Kills a VM and records its end (see `recordEnd`), registered in `ending` from the moment the kill starts.
   * With `vm` (a stop that was asked for: a kill, the end of its lifetime) its pre-stop hook runs first. An
   * end already under way is joined, not repeated (answers undefined, like an end recorded by another).
   */
  private async end(vmId: string, reason: Exclude<VmEndReason, 'failed'>, vm?: Vm): Promise<Vm | undefined> {
    const under = this.ending.get(vmId);
    if (under) {
      await under.catch(() => {});
      return undefined;
    }
    return this.trackEnd(
      vmId,
      (async () => {
        if (vm) await this.preStop(vm, reason === 'expired' ? 'lifetime' : 'user_kill');
        await this.engine.kill(vmId);
        return this.recordEnd(vmId, reason);
      })(),
    );
  }

  /** Registers an end under way for `vmId` (see `ending`) and passes it on. */
  private trackEnd<T>(vmId: string, work: Promise<T>): Promise<T> {
    this.ending.set(vmId, work);
    const settled = () => {
      if (this.ending.get(vmId) === work) this.ending.delete(vmId);
    };
    work.then(settled, settled);
    return work;
  }

  /** A VM another node placed here for `session` (internal route): acquired as a local one, never placed again. */
  startPlacedHere(principal: Principal, session: Session, spec: VmSpec): Promise<LiveVm> {
    return this.joinAcquisition(session.id, () => this.acquireFor(principal, session, spec, true));
  }

  /**
   * Where a new VM of the session goes (placement.ts): another node when this one is drained or full. VMs that
   * start from something on this node's disk (a resolved snapshot or template, volumes) stay here.
   */
  private async placeElsewhere(session: Session, requested: VmSpec): Promise<string | null> {
    if (!this.placement || !this.remote || requested.source || (requested.volumes?.length ?? 0) > 0 || session.source.kind !== 'template') return null;
    const nodeId = await this.placement.choose({ vcpuCount: requested.vcpuCount, memoryMb: requested.memoryMb, templateId: session.source.id });
    return nodeId === this.engine.nodeId ? null : nodeId;
  }

  private async acquireFor(principal: Principal, session: Session, requested: VmSpec, placedHere = false): Promise<LiveVm> {
    const elsewhere = placedHere ? null : await this.placeElsewhere(session, requested);
    if (elsewhere && this.remote) {
      const { vcpuCount, memoryMb, lifetimeSeconds, name, metadata } = requested;
      const vmId = await this.remote.startVm(elsewhere, principal, session.id, {
        vcpuCount,
        memoryMb,
        lifetimeSeconds,
        name: name ?? null,
        metadata: metadata ?? {},
        ...(requested.lifecycleHooks !== undefined ? { lifecycleHooks: requested.lifecycleHooks } : {}),
        ...(requested.egressPolicy ? { egressPolicy: requested.egressPolicy } : {}),
      });
      const vm = await findVm(this.database.db, vmId);
      if (!vm || vm.status !== 'active') throw new AppError('VM_UNAVAILABLE', `VM ${vmId} ended while it was starting on node ${elsewhere}`);
      requested.onReserved?.(vm);
      return { vm, agent: this.remote.agentOf(vm) };
    }
    await this.ensureStarted();
    const source = requested.source ?? (await this.sources.resolve(session.userId, session.source));
    // A snapshot fixes the VM's shape.
    const spec = { ...requested, ...(source.shape ?? {}) };
    const now = this.clock.now();
    const vmId = newVmId();
    // Quota check and reservation in one transaction, so two acquisitions of one user cannot both pass (nor two
    // writers of one volume).
    const volumes = await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, principal.userId);
      await this.limiter.assertCanStartVm(trx, principal, spec.vcpuCount);
      await insertVm(trx, {
        id: vmId,
        userId: principal.userId,
        sessionId: session.id,
        nodeId: this.engine.nodeId,
        status: 'starting',
        endReason: null,
        vcpuCount: spec.vcpuCount,
        memoryMb: spec.memoryMb,
        lifetimeSeconds: spec.lifetimeSeconds,
        templateId: source.ref.id,
        ip: null,
        createdAt: now.toISOString(),
        startedAt: null,
        expiresAt: new Date(now.getTime() + spec.lifetimeSeconds * 1000).toISOString(),
        endedAt: null,
        name: spec.name ?? null,
        metadata: spec.metadata ?? {},
        baseSnapshotId: source.baseSnapshotId,
        pausedAt: null,
        remainingSeconds: null,
        pythonContext: source.pythonContext ?? session.id,
        lifecycleHooks: spec.lifecycleHooks !== undefined ? spec.lifecycleHooks : session.lifecycleHooks,
      });
      if (spec.egressPolicy) await upsertEgressPolicy(trx, 'vm', vmId, principal.userId, JSON.stringify(spec.egressPolicy), now.toISOString());
      await updateSession(trx, session.id, { currentVmId: vmId });
      return attachVolumes(trx, this.clock, principal.userId, vmId, this.engine.nodeId, spec.volumes ?? []);
    });
    const reserved = await findVm(this.database.db, vmId);
    if (reserved) spec.onReserved?.(reserved);

    let acquired;
    try {
      acquired = await this.engine.acquire({
        vmId,
        source: source.source,
        vcpuCount: spec.vcpuCount,
        memoryMb: spec.memoryMb,
        lifetimeSeconds: spec.lifetimeSeconds,
        diskMb: this.limiter.limitsOf(principal).diskMb,
        ...(volumes.length > 0 ? { volumes } : {}),
        prepareNetwork: (target) => this.prepareNetwork(reserved, 'new', target),
      });
    } catch (error) {
      this.startFailed(vmId);
      await this.database.db.transaction().execute(async (trx) => {
        await transitionVm(trx, vmId, ['starting'], { status: 'killed', endReason: 'failed', endedAt: this.clock.now().toISOString() });
        await recordEvent(trx, this.clock, {
          type: 'vm.failed',
          userId: principal.userId,
          subjectId: vmId,
          data: { vm_id: vmId, session_id: session.id, reason: 'error', error: (error as Error).message },
        });
      });
      this.notifier.committed();
      if (error instanceof AppError) throw error; // the engine's own verdict, e.g. HOST_STORAGE_LOW
      throw new AppError('VM_UNAVAILABLE', `could not start a VM: ${(error as Error).message}`);
    }

    const vm = await this.database.db.transaction().execute(async (trx) => {
      const row = await transitionVm(trx, vmId, ['starting'], {
        status: 'active',
        ip: acquired.ip,
        startedAt: acquired.startedAt.toISOString(),
        expiresAt: acquired.expiresAt.toISOString(),
      });
      if (!row) return undefined;
      await recordEvent(trx, this.clock, {
        type: 'vm.started',
        userId: principal.userId,
        subjectId: vmId,
        data: {
          vm_id: vmId,
          session_id: session.id,
          vcpu_count: spec.vcpuCount,
          memory_mb: spec.memoryMb,
          template_id: source.ref.id,
          started_at: acquired.startedAt.toISOString(),
          expires_at: acquired.expiresAt.toISOString(),
        },
      });
      return row;
    });
    this.notifier.committed();
    const agent = this.engine.agent(vmId);
    if (!vm || !agent) {
      // Killed (or crashed) between restore and commit: the caller must not get a dead VM.
      this.startFailed(vmId);
      await this.engine.kill(vmId);
      throw new AppError('VM_UNAVAILABLE', `VM ${vmId} ended while it was starting`);
    }
    const live = { vm, agent };
    const fresh = (await findSession(this.database.db, session.id)) ?? session;
    for (const hook of this.readyHooks) await hook(fresh, live);
    return live;
  }

  /**
   * Snapshots the caller's running VM, live: a new VM (or many) can start from it later, with its memory,
   * processes and disk as they were. The name is reserved first (unique among the user's snapshots and
   * templates); the VM's disk builds on the snapshot from now on.
   */
  async snapshot(principal: Principal, vmId: string, request: { name: string; metadata?: Record<string, string> }): Promise<Snapshot> {
    const vm = await this.getOwned(principal, vmId);
    this.assertRunning(vm, 'snapshotted');
    this.localOrThrow(vm);
    await this.assertNoVolumes(vm, 'snapshotted or cloned');
    const id = newSnapshotId();
    const now = this.clock.now().toISOString();
    // Read before the transaction: on SQLite it holds the one connection, and a read outside it would wait forever.
    const templateId = await this.templateIdOf(vm);
    try {
      await this.database.db.transaction().execute(async (trx) => {
        await this.sources.assertNameFree(trx, principal.userId, request.name);
        await insertSnapshot(trx, {
          id,
          userId: principal.userId,
          name: request.name,
          status: 'creating',
          sourceVmId: vm.id,
          parentId: vm.baseSnapshotId,
          templateId,
          nodeId: this.engine.nodeId,
          vcpuCount: vm.vcpuCount,
          memoryMb: vm.memoryMb,
          diskSizeMb: 0,
          memoryBytes: 0,
          diskBytes: 0,
          stateBytes: 0,
          pauseMs: 0,
          durationMs: 0,
          metadata: request.metadata ?? {},
          pythonContext: pythonContextOf(vm),
          createdAt: now,
        });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', `you already have a snapshot or template named "${request.name}"`);
      throw error;
    }
    let outcome: CaptureOutcome;
    try {
      outcome = await this.engine.snapshot(vm.id, id);
    } catch (error) {
      await deleteSnapshotRow(this.database.db, id);
      await this.engine.deleteSnapshot(id);
      throw captureError(error, `snapshotting VM ${vm.id}`);
    }
    const snapshot = await this.database.db.transaction().execute(async (trx) => {
      const done = await completeSnapshot(trx, id, { ...outcome, pauseMs: outcome.pausedMs });
      await transitionVm(trx, vm.id, ['active'], { baseSnapshotId: id });
      await recordEvent(trx, this.clock, {
        type: 'vm.snapshotted',
        userId: principal.userId,
        subjectId: vm.id,
        data: {
          vm_id: vm.id,
          session_id: vm.sessionId,
          snapshot_id: id,
          name: request.name,
          pause_ms: Math.round(outcome.pausedMs),
          duration_ms: Math.round(outcome.durationMs),
          memory_bytes: outcome.memoryBytes,
          disk_bytes: outcome.diskBytes,
        },
      });
      return done!;
    });
    this.notifier.committed();
    return snapshot;
  }

  /**
   * Pauses the caller's running VM: memory, processes and disk go to this node's disk, its QEMU ends (freeing
   * memory and CPU, and its place in the plan's quota). Its lifetime stops counting until it is resumed (by
   * `resume` or the session's next use). Executions running in it end (their processes go on after the resume).
   */
  async pause(principal: Principal, vmId: string): Promise<{ vm: Vm; outcome: CaptureOutcome }> {
    const vm = await this.getOwned(principal, vmId);
    if (vm.status === 'paused') throw new AppError('CONFLICT', `VM ${vm.id} is paused already`);
    this.assertRunning(vm, 'paused');
    this.localOrThrow(vm);
    await this.assertNoVolumes(vm, 'paused');
    await this.preStop(vm, 'pause');
    const remainingSeconds = Math.max(1, Math.round((Date.parse(vm.expiresAt) - this.clock.now().getTime()) / 1000));
    let outcome: CaptureOutcome;
    try {
      outcome = await this.engine.pause(vm.id);
    } catch (error) {
      throw captureError(error, `pausing VM ${vm.id}`);
    }
    const at = this.clock.now().toISOString();
    const paused = await this.database.db.transaction().execute(async (trx) => {
      const row = await transitionVm(trx, vm.id, ['active'], { status: 'paused', pausedAt: at, remainingSeconds });
      if (!row) return undefined;
      await endInFlightExecutions(trx, this.clock, { vmId: vm.id }, PAUSED_ERROR);
      await recordEvent(trx, this.clock, {
        type: 'vm.paused',
        userId: principal.userId,
        subjectId: vm.id,
        data: { vm_id: vm.id, session_id: vm.sessionId, paused_at: at, remaining_seconds: remainingSeconds, duration_ms: Math.round(outcome.durationMs), memory_bytes: outcome.memoryBytes },
      });
      return row;
    });
    if (!paused) {
      // It was killed meanwhile: nothing will resume it.
      await this.engine.discardPause(vm.id);
      throw new AppError('CONFLICT', `VM ${vm.id} ended while it was being paused`);
    }
    this.notifier.committed();
    return { vm: paused, outcome };
  }

  /** Resumes the caller's paused VM (see `pause`); within the plan's quota, like a new VM. */
  async resume(principal: Principal, vmId: string): Promise<LiveVm> {
    const vm = await this.getOwned(principal, vmId);
    if (vm.status !== 'paused') throw new AppError('CONFLICT', `VM ${vm.id} is ${vm.status}, not paused`);
    const start = () => this.resumeFor(principal, vm);
    return vm.sessionId ? this.joinAcquisition(vm.sessionId, start) : start();
  }

  private async resumeFor(principal: Principal, vm: Vm): Promise<LiveVm> {
    this.localOrThrow(vm);
    const started = Date.now();
    await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, principal.userId);
      await this.limiter.assertCanStartVm(trx, principal, vm.vcpuCount);
      // Reserved as a VM that starts: it counts against the quota from now on.
      const row = await transitionVm(trx, vm.id, ['paused'], { status: 'starting' });
      if (!row) throw new AppError('CONFLICT', `VM ${vm.id} is not paused any more (resumed or killed meanwhile)`);
    });
    let acquired;
    try {
      acquired = await this.engine.resume({
        vmId: vm.id,
        lifetimeSeconds: vm.remainingSeconds ?? vm.lifetimeSeconds,
        diskMb: this.limiter.limitsOf(principal).diskMb,
        prepareNetwork: (target) => this.prepareNetwork(vm, 'resumed', target),
      });
    } catch (error) {
      this.startFailed(vm.id);
      // Its saved state is untouched: it stays paused, to be resumed again.
      await transitionVm(this.database.db, vm.id, ['starting'], { status: 'paused' });
      throw captureError(error, `resuming VM ${vm.id}`);
    }
    const resumed = await this.database.db.transaction().execute(async (trx) => {
      const row = await transitionVm(trx, vm.id, ['starting'], {
        status: 'active',
        startedAt: acquired.startedAt.toISOString(),
        expiresAt: acquired.expiresAt.toISOString(),
        pausedAt: null,
        remainingSeconds: null,
      });
      if (!row) return undefined;
      await recordEvent(trx, this.clock, {
        type: 'vm.resumed',
        userId: principal.userId,
        subjectId: vm.id,
        data: { vm_id: vm.id, session_id: vm.sessionId, resume_ms: Date.now() - started, expires_at: acquired.expiresAt.toISOString() },
      });
      return row;
    });
    this.notifier.committed();
    const agent = this.engine.agent(vm.id);
    if (!resumed || !agent) {
      this.startFailed(vm.id);
      await this.engine.kill(vm.id);
      throw new AppError('VM_UNAVAILABLE', `VM ${vm.id} ended while it was resuming`);
    }
    try {
      for (const hook of this.resumedHooks) await hook(resumed);
    } catch (error) {
      await this.engine.kill(vm.id);
      throw error;
    }
    return { vm: resumed, agent };
  }

  /**
   * A capture of a VM with volumes would keep their filesystems' state (page cache, open files) in its memory
   * while the images go on changing: a VM restored from it would corrupt them. So such VMs are not captured.
   */
  private async assertNoVolumes(vm: Vm, what: string): Promise<void> {
    if (await vmHasVolumes(this.database.db, vm.id)) throw new AppError('CONFLICT', `VM ${vm.id} has volumes mounted: a VM with volumes cannot be ${what}`);
  }

  /**
   * After a restart: snapshots this node was still taking are over (nothing completes them); their files and
   * rows go. Their VMs ran on: a failed live capture leaves the VM as it was.
   */
  private async dropUnfinishedSnapshots(): Promise<void> {
    for (const snapshot of await listCreatingSnapshotsOfNode(this.database.db, this.engine.nodeId)) {
      await this.engine.deleteSnapshot(snapshot.id);
      await deleteSnapshotRow(this.database.db, snapshot.id);
    }
  }

  /** The template a VM's chain starts from: its own, or its base snapshot's (older records named the variant). */
  private async templateIdOf(vm: Vm): Promise<string> {
    if (vm.baseSnapshotId) return (await findSnapshot(this.database.db, vm.baseSnapshotId))?.templateId ?? DEFAULT_TEMPLATE_ID;
    return /^snap\d+$/.test(vm.templateId) ? DEFAULT_TEMPLATE_ID : vm.templateId;
  }

  private assertRunning(vm: Vm, what: string): void {
    if (vm.status === 'paused') throw new AppError('CONFLICT', `VM ${vm.id} is paused: resume it before it can be ${what}`);
    if (vm.status !== 'active') throw new AppError('CONFLICT', `VM ${vm.id} is ${vm.status}: only a running VM can be ${what}`);
  }

  /** The VM's process (or saved state) is on this node, else VM_UNAVAILABLE naming the node. */
  private localOrThrow(vm: Vm): void {
    if (vm.nodeId !== this.engine.nodeId) {
      throw new AppError('VM_UNAVAILABLE', `VM ${vm.id} runs on node ${vm.nodeId}, not on this one (${this.engine.nodeId}): send the request to that node`);
    }
  }

  /**
   * Marks a live VM killed with `reason` and records the event of that end (`vm.expired`, `vm.crashed`,
   * `vm.agent_lost`, else `vm.killed`); a VM already ended is left alone. A VM that never started ends as `failed` in acquireFor.
   */
  private async recordEnd(vmId: string, reason: Exclude<VmEndReason, 'failed'>, from: readonly VmStatus[] = LIVE_VM_STATUSES): Promise<Vm | undefined> {
    const at = this.clock.now().toISOString();
    const row = await this.database.db.transaction().execute(async (trx) => {
      const ended = await transitionVm(trx, vmId, from, { status: 'killed', endReason: reason, endedAt: at, pausedAt: null, remainingSeconds: null });
      if (!ended) return undefined;
      await endInFlightExecutions(trx, this.clock, { vmId }, endedExecutionError(reason));
      const event = { userId: ended.userId, subjectId: vmId };
      const data = { vm_id: vmId, session_id: ended.sessionId, ended_at: at };
      if (reason === 'expired') await recordEvent(trx, this.clock, { ...event, type: 'vm.expired', data: { ...data, reason: 'lifetime', detail: reason } });
      else if (reason === 'crashed') await recordEvent(trx, this.clock, { ...event, type: 'vm.crashed', data: { ...data, reason: 'error', detail: reason } });
      else if (reason === 'agent_lost') await recordEvent(trx, this.clock, { ...event, type: 'vm.agent_lost', data: { ...data, reason: 'error', detail: reason } });
      else if (reason === 'node_lost') await recordEvent(trx, this.clock, { ...event, type: 'vm.lost', data: { ...data, reason: 'node_lost', detail: reason } });
      else await recordEvent(trx, this.clock, { ...event, type: 'vm.killed', data: { ...data, reason: reason === 'killed' ? 'user_kill' : 'server_stop', detail: reason } });
      return ended;
    });
    if (row) this.notifier.committed();
    return row;
  }
}

/** The Python context a VM's session code runs in (older records: the session's id). */
export function pythonContextOf(vm: Vm): string | null {
  return vm.pythonContext ?? vm.sessionId;
}

/** An engine error of a capture or resume as the API answers it (the engine's own AppErrors pass through). */
function captureError(error: unknown, what: string): AppError {
  if (error instanceof AppError) return error;
  return new AppError('VM_UNAVAILABLE', `${what} failed: ${(error as Error).message}`);
}

/** Why an execution that was running in a VM ended without its result. */
function endedExecutionError(reason: Exclude<VmEndReason, 'failed'>): string {
  switch (reason) {
    case 'expired':
      return 'the VM reached the end of its lifetime before the execution finished';
    case 'agent_lost':
      return "the VM's agent could not be reached again, so the VM was killed before the execution finished";
    case 'server_restart':
      return 'the server restarted before the execution finished; its output is lost';
    case 'node_lost':
      return "the VM's node stopped answering (declared dead by the cluster) before the execution finished; its output is lost";
    case 'server_shutdown':
      return SHUT_DOWN_ERROR;
    default:
      return `the VM ended (${reason}) before the execution finished`;
  }
}
