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
import { newVmId } from './ids.ts';
import type { PlanLimiter } from './limits.ts';
import { LIVE_VM_STATUSES, type Session, type SessionSpec, type Vm, type VmEndReason, type VmStatus } from './model.ts';
import type { AcquireEstimate, GuestAgent, VmEngine } from './vm-engine.ts';
import type { Database } from '../store/database.ts';
import { findSession, updateSession } from '../store/sessions-store.ts';
import { findVm, insertVm, listLiveVmsOfNode, listVms, transitionVm } from '../store/vms-store.ts';
import type { Executor } from '../store/users-store.ts';

export interface VmSpec {
  vcpuCount: number;
  memoryMb: number;
  lifetimeSeconds: number;
}

/** A session's live VM with its agent. */
export interface LiveVm {
  vm: Vm;
  agent: GuestAgent;
}

/** Hooks run right after a session gets a new VM (e.g. apply the session's env to its Python context). */
export type VmReadyHook = (session: Session, live: LiveVm) => Promise<void>;

export class VmService {
  /** One acquisition at a time per session, so concurrent executes share one new VM. */
  private readonly acquiring = new Map<string, Promise<LiveVm>>();
  private readyHooks: VmReadyHook[] = [];
  private started: Promise<{ adopted: number; ended: number }> | undefined;
  /** The store reconciled with what the engine re-adopted after a restart (see `reconciled`). */
  private reconciling: Promise<{ adopted: number; ended: number }> | undefined;
  /**
   * Ends being carried out or recorded (engine reports, kills), by VM: a request that finds such a VM no
   * longer live waits for its record instead of starting a second VM beside one that is still recorded live.
   */
  private readonly ending = new Map<string, Promise<unknown>>();

  constructor(
    private readonly database: Database,
    private readonly engine: VmEngine,
    private readonly limiter: PlanLimiter,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
  ) {
    engine.onVmEnded((vmId, reason) => {
      this.trackEnd(vmId, this.recordEnd(vmId, reason)).catch(() => {});
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
    this.reconciling ??= this.engine.recovered().then(() => this.reconcile());
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

  /**
   * The session's VM if it is alive, else a new one (the previous one expired, was killed, or never existed).
   * A VM whose agent does not answer is still the session's VM: its errors are the caller's answer, and it
   * is replaced only after its end is recorded (the engine kills a VM whose agent link cannot be restored).
   */
  async ensureVm(principal: Principal, session: Session): Promise<LiveVm> {
    await this.ensureStarted();
    const current = this.acquiring.get(session.id) ?? (await this.liveVmOf(session));
    if (current) return current;
    const pending = this.acquiring.get(session.id);
    if (pending) return pending;
    const acquisition = this.acquireFor(principal, session, {
      vcpuCount: session.vcpuCount,
      memoryMb: session.memoryMb,
      lifetimeSeconds: session.vmLifetimeSeconds,
    }).finally(() => this.acquiring.delete(session.id));
    this.acquiring.set(session.id, acquisition);
    return acquisition;
  }

  /**
   * How long a caller would wait for the VM of `session` (or of a new session with this spec) if it asked
   * now: null when the session has a live VM or one is already on its way (it shares that one).
   */
  async admission(session: Session | (SessionSpec & { id?: undefined })): Promise<AcquireEstimate | null> {
    if (session.id !== undefined && (this.acquiring.has(session.id) || (await this.liveVmOf(session)))) return null;
    return this.engine.estimateAcquire({ vcpuCount: session.vcpuCount, memoryMb: session.memoryMb });
  }

  /** POST /v1/vms: bind a new VM to a session that has none alive. */
  async createForSession(principal: Principal, session: Session, spec: VmSpec): Promise<LiveVm> {
    if (this.acquiring.has(session.id) || (await this.liveVmOf(session))) {
      throw new AppError('CONFLICT', `session ${session.id} already has a running VM; kill it first (POST /kill)`);
    }
    const acquisition = this.acquireFor(principal, session, spec).finally(() => this.acquiring.delete(session.id));
    this.acquiring.set(session.id, acquisition);
    return acquisition;
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
    return vm.status === 'active' ? this.engine.agent(vm.id) : null;
  }

  /**
   * Kills a VM the caller owns. Answers with the killed row; a VM that is not running is a 404 (nothing to
   * kill), as the spec's /kill does for "no VM assigned".
   */
  async kill(principal: Principal, vm: Vm): Promise<Vm> {
    if (vm.userId !== principal.userId) throw notFound(`VM ${vm.id}`);
    if (!(LIVE_VM_STATUSES as readonly VmStatus[]).includes(vm.status)) throw new AppError('NOT_FOUND', `VM ${vm.id} is not running (status ${vm.status})`);
    const ended = await this.end(vm.id, 'killed');
    return ended ?? (await findVm(this.database.db, vm.id))!;
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
    if (!vm || vm.status === 'killed') return null;
    if (vm.nodeId !== this.engine.nodeId) {
      throw new AppError('VM_UNAVAILABLE', `the session's VM ${vm.id} runs on node ${vm.nodeId}, not on this one (${this.engine.nodeId}): send the session's requests to that node`);
    }
    // An acquisition of this process is joined by ensureVm; a 'starting' record left by a process that died
    // was ended when this one started.
    if (vm.status === 'starting') throw new AppError('VM_UNAVAILABLE', `the session's VM ${vm.id} is still starting: retry`);
    if (Date.parse(vm.expiresAt) <= this.clock.now().getTime()) {
      // Its deadline is due (the engine's timer fires about now): end it here rather than run code in it.
      await this.end(vm.id, 'expired');
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

  /** Kills a VM and records its end (see `recordEnd`), registered in `ending` from the moment the kill starts. */
  private end(vmId: string, reason: Exclude<VmEndReason, 'failed'>): Promise<Vm | undefined> {
    return this.trackEnd(
      vmId,
      (async () => {
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

  private async acquireFor(principal: Principal, session: Session, spec: VmSpec): Promise<LiveVm> {
    await this.ensureStarted();
    const now = this.clock.now();
    const vmId = newVmId();
    // Quota check and reservation in one transaction, so two acquisitions of one user cannot both pass.
    await this.database.db.transaction().execute(async (trx) => {
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
        templateId: `snap${spec.vcpuCount}`,
        ip: null,
        createdAt: now.toISOString(),
        startedAt: null,
        expiresAt: new Date(now.getTime() + spec.lifetimeSeconds * 1000).toISOString(),
        endedAt: null,
      });
      await updateSession(trx, session.id, { currentVmId: vmId });
    });

    let acquired;
    try {
      acquired = await this.engine.acquire({ vmId, ...spec, diskMb: this.limiter.limitsOf(principal).diskMb });
    } catch (error) {
      await this.database.db.transaction().execute(async (trx) => {
        await transitionVm(trx, vmId, ['starting'], { status: 'killed', endReason: 'failed', endedAt: this.clock.now().toISOString() });
        await recordEvent(trx, this.clock, {
          type: 'vm.failed',
          userId: principal.userId,
          subjectId: vmId,
          data: { vm_id: vmId, session_id: session.id, error: (error as Error).message },
        });
      });
      this.notifier.committed();
      if (error instanceof AppError) throw error; // the engine's own verdict, e.g. HOST_STORAGE_LOW
      throw new AppError('VM_UNAVAILABLE', `could not start a VM: ${(error as Error).message}`);
    }

    const vm = await this.database.db.transaction().execute(async (trx) => {
      const row = await transitionVm(trx, vmId, ['starting'], {
        status: 'active',
        templateId: acquired.templateId,
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
          template_id: acquired.templateId,
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
      await this.engine.kill(vmId);
      throw new AppError('VM_UNAVAILABLE', `VM ${vmId} ended while it was starting`);
    }
    const live = { vm, agent };
    const fresh = (await findSession(this.database.db, session.id)) ?? session;
    for (const hook of this.readyHooks) await hook(fresh, live);
    return live;
  }

  /**
   * Marks a live VM killed with `reason` and records the event of that end (`vm.expired`, `vm.crashed`,
   * `vm.agent_lost`, else `vm.killed`); a VM already ended is left alone. A VM that never started ends as `failed` in acquireFor.
   */
  private async recordEnd(vmId: string, reason: Exclude<VmEndReason, 'failed'>): Promise<Vm | undefined> {
    const at = this.clock.now().toISOString();
    const row = await this.database.db.transaction().execute(async (trx) => {
      const ended = await transitionVm(trx, vmId, LIVE_VM_STATUSES, { status: 'killed', endReason: reason, endedAt: at });
      if (!ended) return undefined;
      await endInFlightExecutions(trx, this.clock, { vmId }, endedExecutionError(reason));
      const event = { userId: ended.userId, subjectId: vmId };
      const data = { vm_id: vmId, session_id: ended.sessionId, ended_at: at };
      if (reason === 'expired') await recordEvent(trx, this.clock, { ...event, type: 'vm.expired', data: { ...data, reason } });
      else if (reason === 'crashed') await recordEvent(trx, this.clock, { ...event, type: 'vm.crashed', data: { ...data, reason } });
      else if (reason === 'agent_lost') await recordEvent(trx, this.clock, { ...event, type: 'vm.agent_lost', data: { ...data, reason } });
      else await recordEvent(trx, this.clock, { ...event, type: 'vm.killed', data: { ...data, reason } });
      return ended;
    });
    if (row) this.notifier.committed();
    return row;
  }
}

/** Serialises quota checks per user: PostgreSQL row lock; SQLite transactions are already serialised. */
async function lockUser(trx: Executor, dialect: string, userId: number): Promise<void> {
  if (dialect === 'postgres') await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
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
    case 'server_shutdown':
      return SHUT_DOWN_ERROR;
    default:
      return `the VM ended (${reason}) before the execution finished`;
  }
}
