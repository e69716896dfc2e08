/**
 * The VM lifecycle of sessions, behind one facade: acquire on first use (or at once with prewarm, or by POST
 * /v1/vms), reuse while alive, pause, resume and snapshot, record expiry and crashes, kill on request, and
 * reconcile with the engine after a restart. Every state change is written with its event in one transaction.
 * The jobs live beside it: resolve.ts (which VM a session has, read once per request), acquisition.ts, capture.ts,
 * ends.ts, lifetime.ts, pre-stop.ts, readiness.ts (the steps that make a VM ready for its session), recovery.ts, cluster.ts.
 */
import { DEFAULT_TEMPLATE_ID, LIVE_VM_STATUSES, type Session, type SessionSpec, type Snapshot, type Vm, type VmStatus } from '../../model.ts';
import { findVm, listLiveVmsOfNode, listVms } from '../../store/vms-store.ts';
import type { Principal } from '../authenticator.ts';
import type { Clock } from '../clock.ts';
import { AppError, notFound } from '../errors.ts';
import type { EventNotifier } from '../events.ts';
import type { PlanLimiter } from '../limits.ts';
import type { AcquireEstimate, CaptureOutcome, GuestAgent, VmEngine } from '../vm-engine.ts';
import type { VmSources } from '../vm-sources.ts';
import type { KillQueue } from '../cluster/kill-queue.ts';
import type { Placement } from '../cluster/placement.ts';
import type { RemoteNodes } from '../cluster/remote-nodes.ts';
import type { Database } from '../../store/database.ts';
import { VmAcquisition } from './acquisition.ts';
import { VmActivity } from './activity.ts';
import { VmAutoPause, type AutoPauseOptions } from './auto-pause.ts';
import { noteResumed } from './resume-note.ts';
import type { BackgroundFailures } from '../background-timers.ts';
import { VmCapture } from './capture.ts';
import { VmCluster } from './cluster.ts';
import { VmEnds } from './ends.ts';
import { setVmLifetime } from './lifetime.ts';
import { PreStopHooks } from './pre-stop.ts';
import { NO_READINESS, type VmReadiness } from './readiness.ts';
import { VmRecovery, type StartCounts } from './recovery.ts';
import { VmResolver, type ResolvedVm, type SessionWithVm } from './resolve.ts';
import type { LiveVm, PreStopRunner, VmServiceDeps, VmSpec } from './types.ts';

/**
 * What an execute finds before it records its run: the VM to run in at once (`live`: the session's VM is
 * running), else how long a new one would take (`estimate`; null when one is already on its way), and the state
 * it resolved (handed to `ensureVm`, which then reads nothing again).
 */
export interface Admission {
  live: LiveVm | null;
  estimate: AcquireEstimate | null;
  resolved: ResolvedVm | null;
}

export class VmService {
  private readonly deps: VmServiceDeps;
  private readonly preStop: PreStopHooks;
  private readonly ends: VmEnds;
  private readonly cluster: VmCluster;
  private readonly recovery: VmRecovery;
  private readonly acquisition: VmAcquisition;
  private readonly resolver: VmResolver;
  private readonly capture: VmCapture;
  private readiness: VmReadiness = NO_READINESS;
  /** Every use of a VM's agent through this service, for auto-pause (activity.ts). */
  readonly activity: VmActivity;
  private autoPause: VmAutoPause | null = null;

  constructor(
    database: Database,
    engine: VmEngine,
    limiter: PlanLimiter,
    clock: Clock,
    notifier: EventNotifier,
    sources: VmSources,
    /** Agents of VMs on other nodes of the cluster, and VMs started there (absent: every VM is on this node). */
    remote: RemoteNodes | null = null,
    /** Where new VMs go (absent: always this node). */
    placement: Placement | null = null,
    /** Where kills of VMs on other nodes go (cluster mode). */
    killQueue: KillQueue | null = null,
    /** Where work done beside a request reports its failures. */
    failures: BackgroundFailures | null = null,
  ) {
    this.deps = { database, engine, limiter, clock, notifier, sources, remote, placement, killQueue, failures };
    this.preStop = new PreStopHooks((vm) => this.agentOf(vm));
    this.ends = new VmEnds(this.deps, this.preStop);
    this.cluster = new VmCluster(this.deps, this.ends);
    this.recovery = new VmRecovery(this.deps, this.ends);
    const readiness = () => this.readiness;
    this.acquisition = new VmAcquisition(this.deps, this.recovery, this.cluster, readiness);
    this.resolver = new VmResolver(this.deps, this.recovery, this.acquisition, this.cluster, this.ends);
    this.capture = new VmCapture(this.deps, this.cluster, this.acquisition, this.preStop, readiness);
    this.activity = new VmActivity(clock);
    engine.onVmEnded((vmId, reason) => {
      this.activity.forget(vmId);
      this.ends.reported(vmId, reason).catch(() => {});
    });
    engine.onBeforeExpiry(async (vmId) => {
      const vm = await findVm(database.db, vmId);
      if (vm?.status !== 'active') return;
      // `on_expiry: pause`: paused instead (the engine then has nothing left to kill); killed if that fails.
      if (vm.onExpiry === 'pause' && this.autoPause && (await this.autoPause.pauseAtExpiry(vm))) return;
      await this.preStop.run(vm, 'lifetime');
    });
  }

  /**
   * Starts the engine and reconciles the store with it (VMs recorded live that did not survive a restart are
   * marked ended); once, before the first acquisition. main.ts calls it at start to warm up.
   */
  start(): Promise<StartCounts> {
    return this.recovery.start();
  }

  /** The node this service runs VMs (and executions) on. */
  get nodeId(): string {
    return this.deps.engine.nodeId;
  }

  /**
   * Starts this node's auto-pause loops (auto-pause.ts): idle VMs with `auto_pause` are paused, activity is
   * flushed to the store, paused VMs past their plan's retention are deleted. Until then a VM with
   * `on_expiry: pause` is killed at its expiry like any other.
   */
  startAutoPause(options: AutoPauseOptions, failures: BackgroundFailures): void {
    this.autoPause ??= new VmAutoPause(this.deps, this.activity, this.capture, this.ends, failures);
    this.autoPause.start(options);
  }

  /** Stops the auto-pause loops (the activity seen so far is flushed). */
  async stopAutoPause(): Promise<void> {
    await this.autoPause?.stop();
  }

  /** One turn of the auto-pause loop now (tests; the loop runs it every `checkMs`). */
  pauseIdleNow(): Promise<number> {
    return this.autoPause?.pauseIdle() ?? Promise.resolve(0);
  }

  /** One turn of the paused VMs' retention loop now (tests). */
  deleteExpiredPausedNow(): Promise<number> {
    return this.autoPause?.deleteExpiredPaused() ?? Promise.resolve(0);
  }

  /** A live VM whose agent records every use (activity.ts). */
  private watched(live: LiveVm): LiveVm {
    return { vm: live.vm, agent: this.activity.watch(live.vm.id, live.agent) };
  }

  /** What makes a VM ready for its session (readiness.ts), wired once by services.ts; until then nothing runs. */
  setReadiness(readiness: VmReadiness): void {
    this.readiness = readiness;
  }

  /** Who runs pre-stop hooks (the execution service, so each run is an execution record); until set, none run. */
  setPreStopRunner(runner: PreStopRunner): void {
    this.preStop.setRunner(runner);
  }

  /**
   * The state of the session's VM (resolve.ts), read once: `read` is the session and its VM as the caller just
   * read them (`SessionService.getOwnedWithVm`), else they are read here.
   */
  resolveVm(session: Session, read?: SessionWithVm): Promise<ResolvedVm> {
    return this.resolver.resolve(session, read);
  }

  /**
   * The session's VM if it is alive, else a new one (the previous one expired, was killed, or never existed); a
   * paused VM is resumed, never replaced. A VM whose agent does not answer is still the session's VM: its errors
   * are the caller's answer, and it is replaced only after its end is recorded (the engine kills a VM whose agent
   * link cannot be restored). `resolved`: the state an admission just resolved (nothing is read again).
   */
  async ensureVm(principal: Principal, session: Session, resolved?: ResolvedVm): Promise<LiveVm> {
    return this.watched(await this.ensureVmUnwatched(principal, session, resolved));
  }

  private async ensureVmUnwatched(principal: Principal, session: Session, resolved?: ResolvedVm): Promise<LiveVm> {
    await this.recovery.ensureStarted();
    const current = resolved ?? (await this.resolver.resolve(session));
    const { state } = current;
    if (state.kind === 'acquiring') return state.pending;
    // One started since this state was resolved: share it.
    const joined = this.acquisition.pending(session.id);
    if (joined) return joined;
    if (state.kind === 'paused') {
      // The request that needs it waits for it, and its answer says so (resume-note.ts).
      const started = Date.now();
      const live = await this.acquisition.join(session.id, () => this.capture.resumePaused(principal, state.vm, { auto: true }));
      noteResumed(Date.now() - started);
      return live;
    }
    const { live } = await this.resolver.settle(current);
    if (live) return live;
    const spec = { vcpuCount: session.vcpuCount, memoryMb: session.memoryMb, lifetimeSeconds: session.vmLifetimeSeconds };
    return this.acquisition.join(session.id, () => this.acquisition.acquire(principal, current.session, spec));
  }

  /**
   * What an execute on `target` finds (see `Admission`): the session with its VM as just read, or the spec of a
   * session about to be made (which has no VM yet).
   */
  async admission(target: SessionWithVm | SessionSpec): Promise<Admission> {
    if (!('session' in target)) return { live: null, resolved: null, estimate: this.estimate(target) };
    const resolved = await this.resolver.resolve(target.session, target);
    // A VM on its way is shared: no wait of its own to estimate.
    if (resolved.state.kind === 'acquiring') return { live: null, resolved, estimate: null };
    const settled = await this.resolver.settle(resolved);
    return { ...settled, live: settled.live && this.watched(settled.live), estimate: settled.live ? null : this.estimate(target.session) };
  }

  /** How long a caller would wait for a new VM of this shape if it asked now. */
  private estimate(spec: SessionSpec): AcquireEstimate {
    // A source other than the built-in template restores without the pool: the estimate says so.
    const source =
      spec.source.kind === 'template' && spec.source.id === DEFAULT_TEMPLATE_ID ? undefined : ({ kind: 'snapshot', snapshotId: '', diskSizeMb: 0 } as const);
    return this.deps.engine.estimateAcquire({ vcpuCount: spec.vcpuCount, memoryMb: spec.memoryMb, ...(source ? { source } : {}) });
  }

  /** 409 unless a new VM may start for the session now (none of it is running, starting or paused). */
  async checkCanStart(session: Session): Promise<void> {
    const resolved = await this.resolver.resolve(session);
    if (resolved.state.kind === 'paused') throw new AppError('CONFLICT', `session ${session.id} has a paused VM; resume it or kill it first`);
    if (resolved.state.kind === 'acquiring' || (await this.resolver.settle(resolved)).live) {
      throw new AppError('CONFLICT', `session ${session.id} already has a running VM; kill it first (POST /kill)`);
    }
  }

  /** POST /v1/vms: binds a new VM to a session that has none alive. */
  async createForSession(principal: Principal, session: Session, spec: VmSpec): Promise<LiveVm> {
    await this.checkCanStart(session);
    return this.acquisition.join(session.id, () => this.acquisition.acquire(principal, session, spec));
  }

  /** A VM another node placed here for `session` (internal command): acquired as a local one, never placed again. */
  startPlacedHere(principal: Principal, session: Session, spec: VmSpec): Promise<LiveVm> {
    return this.acquisition.join(session.id, () => this.acquisition.acquire(principal, session, spec, true));
  }

  /** A paused VM another node asked this one to resume (internal command): resumed here, never placed again. */
  async resumePlacedHere(principal: Principal, vmId: string, auto = false): Promise<LiveVm> {
    const vm = await this.getOwned(principal, vmId);
    if (vm.status !== 'paused') throw new AppError('CONFLICT', `VM ${vm.id} is ${vm.status}, not paused`);
    const resume = () => this.capture.resumePaused(principal, vm, { placedHere: true, auto });
    return vm.sessionId ? this.acquisition.join(vm.sessionId, resume) : resume();
  }

  /** The VM record, whoever owns it (the SSH gateway's login checks ownership with `getOwned` afterwards). */
  async find(vmId: string): Promise<Vm | undefined> {
    return findVm(this.deps.database.db, vmId);
  }

  async getOwned(principal: Principal, vmId: string): Promise<Vm> {
    const vm = await findVm(this.deps.database.db, vmId);
    if (!vm || vm.userId !== principal.userId) throw notFound(`VM ${vmId}`);
    return vm;
  }

  async list(principal: Principal, limit: number, status?: VmStatus): Promise<Vm[]> {
    return listVms(this.deps.database.db, principal.userId, limit, status ? { status } : {});
  }

  /** The live agent of a VM row, or null. */
  agentOf(vm: Vm): GuestAgent | null {
    const agent = this.cluster.agentOf(vm);
    return agent && this.activity.watch(vm.id, agent);
  }

  /**
   * Kills a VM the caller owns. Answers with the killed row; a VM that is not running is a 404 (nothing to
   * kill), as the spec's /kill does for "no VM assigned".
   */
  async kill(principal: Principal, vm: Vm): Promise<Vm> {
    if (vm.userId !== principal.userId) throw notFound(`VM ${vm.id}`);
    const recorded = async (ended: Vm | undefined) => ended ?? (await findVm(this.deps.database.db, vm.id))!;
    if (vm.status === 'paused') {
      // Nothing runs: its saved memory and disk go, and the record says it was killed.
      this.cluster.assertPauseReachable(vm);
      const ended = await this.ends.record(vm.id, 'killed', ['paused']);
      if (ended) await this.deps.engine.discardPause(vm.id);
      return recorded(ended);
    }
    if (!(LIVE_VM_STATUSES as readonly VmStatus[]).includes(vm.status)) throw new AppError('NOT_FOUND', `VM ${vm.id} is not running (status ${vm.status})`);
    if (this.cluster.killsElsewhere(vm)) return this.cluster.killElsewhere(vm);
    return recorded(await this.ends.end(vm.id, 'killed', vm));
  }

  /** Kills a VM of this node and records its end (the kill queue's work for kills dispatched here). */
  async killHere(vmId: string): Promise<void> {
    await this.ends.end(vmId, 'killed', await findVm(this.deps.database.db, vmId));
  }

  /**
   * A graceful stop of this node: every VM it runs is killed and recorded ended (`server_shutdown`, with its
   * event). Called before the engine closes, and again after it (a VM whose acquisition finished in between
   * was killed by the engine as it closed, and is recorded then). Not called when VMs are kept for the next
   * start to re-adopt. Answers how many it ended.
   */
  async stop(): Promise<number> {
    const rows = await listLiveVmsOfNode(this.deps.database.db, this.nodeId);
    const ended = await Promise.all(rows.map((row) => this.ends.end(row.id, 'server_shutdown')));
    return ended.filter(Boolean).length;
  }

  /** What a node (default this one) runs now, by the store (a node's heartbeat reports its own). */
  nodeLoad(nodeId?: string): Promise<{ runningVms: number; usedVcpus: number; usedMemoryMb: number }> {
    return this.cluster.nodeLoad(nodeId);
  }

  /** VMs recorded live on nodes declared dead are recorded lost (cluster.ts); answers how many this call recorded. */
  recordLostVms(): Promise<number> {
    return this.cluster.recordLostVms();
  }

  /** This node was declared dead while running: the VMs the store no longer counts are killed (cluster.ts). */
  killForsaken(): Promise<number> {
    return this.cluster.killForsaken();
  }

  /** Snapshots the caller's running VM (capture.ts). */
  async snapshot(principal: Principal, vmId: string, request: { name: string; metadata?: Record<string, string> }): Promise<Snapshot> {
    return this.capture.snapshot(principal, await this.getOwned(principal, vmId), request);
  }

  /** Pauses the caller's running VM (capture.ts). */
  async pause(principal: Principal, vmId: string): Promise<{ vm: Vm; outcome: CaptureOutcome }> {
    return this.capture.pause(principal, await this.getOwned(principal, vmId));
  }

  /** The caller's VM ends `seconds` from now (a paused one: `seconds` after it resumes). */
  async setLifetime(principal: Principal, vmId: string, seconds: number): Promise<Vm> {
    return setVmLifetime(this.deps, this.cluster, await this.getOwned(principal, vmId), seconds);
  }

  /** Resumes the caller's paused VM (capture.ts); within the plan's quota, like a new VM. The answer says so (Sandboxd-Resumed). */
  async resume(principal: Principal, vmId: string): Promise<LiveVm> {
    const vm = await this.getOwned(principal, vmId);
    const started = Date.now();
    const live = await this.capture.resume(principal, vm);
    noteResumed(Date.now() - started);
    return this.watched(live);
  }
}
