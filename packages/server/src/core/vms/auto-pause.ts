/**
 * The VMs nobody uses (issue 37): a VM with `auto_pause` is paused once it has been idle that long, through the
 * one pause path (capture.ts), and a paused VM kept longer than its owner's plan allows (`pausedRetentionSeconds`)
 * is deleted as a kill of a paused VM is (its end recorded, its pause image discarded). Each node pauses the VMs it
 * runs; activity seen by other nodes reaches it through the store (activity.ts). Paused VMs are each node's own to
 * delete, or any node's when pauses are in the cluster's object store (the conditional end makes one the deleter).
 *
 * The race with a request that arrives while a pause is under way is accepted, not locked out: the loop checks the
 * VM's activity once more right before it pauses it, and a request that still comes in meanwhile finds the VM
 * paused (then resumes it: `ensureVm`) or has its execution ended as by a manual pause. A pause that fails leaves
 * the VM running (capture.ts), is reported as a failure of the `auto_pause` loop (logged and counted) and is not
 * tried again for that VM for `RETRY_AFTER_FAILURE_MS`.
 */
import type { Vm } from '../../model.ts';
import { listAutoPauseCandidates, listPausedVmsWithPlans, transitionVm } from '../../store/vms-store.ts';
import type { Principal } from '../authenticator.ts';
import { BackgroundTimers, type BackgroundFailures } from '../background-timers.ts';
import { recordEvent } from '../events.ts';
import type { VmActivity } from './activity.ts';
import type { VmCapture } from './capture.ts';
import type { VmEnds } from './ends.ts';
import type { VmServiceDeps } from './types.ts';

/**
 * Whether traffic resumes a paused VM (preview and E2B port traffic, process and terminal calls): one made to pause
 * by itself (`auto_pause`, `on_expiry: pause`). A VM paused on request stays paused until its owner resumes it or
 * runs code or a file call in it: someone opening a public share must not undo a pause the owner asked for.
 */
export function resumesOnTraffic(vm: Vm): boolean {
  return vm.autoPauseSeconds !== null || vm.onExpiry === 'pause';
}

/** How long a VM whose auto-pause failed is left alone before the loop tries again. */
export const RETRY_AFTER_FAILURE_MS = 5 * 60_000;

/** Paused VMs deleted per turn of the retention loop at most (the next turn goes on). */
const RETENTION_BATCH = 1000;

/** How often the loops run. */
export interface AutoPauseOptions {
  /** Idle VMs are looked for, and activity flushed to the store, this often. */
  checkMs: number;
  /** Paused VMs past their plan's retention are looked for this often. */
  retentionCheckMs: number;
}

/**
 * The principal a pause the server decides on is recorded under: the VM's owner (a pause reads only the user's
 * id from it; it is never authorized with it).
 */
function ownerOf(vm: Vm): Principal {
  return { userId: vm.userId, username: '', plan: '', isAdmin: false, via: 'session_token', apiKeyId: null };
}

export class VmAutoPause {
  private readonly timers: BackgroundTimers;
  /** VMs whose pause failed, with when they may be tried again (epoch ms). */
  private readonly failedUntil = new Map<string, number>();
  /** VMs being paused by this loop or at their expiry (never two pauses of one VM). */
  private readonly pausing = new Set<string>();
  /** The auto-pause turn under way, if any. */
  private turn: Promise<number> | null = null;

  constructor(
    private readonly deps: VmServiceDeps,
    private readonly activity: VmActivity,
    private readonly capture: VmCapture,
    private readonly ends: VmEnds,
    private readonly failures: BackgroundFailures,
  ) {
    this.timers = new BackgroundTimers(failures);
  }

  start(options: AutoPauseOptions): void {
    if (this.timers.running) return;
    this.timers.every('vm_activity_flush', options.checkMs, async () => {
      await this.activity.flush(this.deps.database);
      // What this node needs of its own VMs only; the store has the rest.
      this.activity.prune((vmId) => this.deps.engine.agent(vmId) !== null);
    });
    this.timers.every('auto_pause', options.checkMs, () => this.pauseIdle());
    this.timers.every('paused_retention', options.retentionCheckMs, () => this.deleteExpiredPaused());
  }

  async stop(): Promise<void> {
    this.timers.clear();
    await this.activity.flush(this.deps.database).catch((error: unknown) => this.failures.report('vm_activity_flush', error));
  }

  /** Seconds the VM has been idle by what this node knows (its own record and the store's), or null while busy. */
  idleSeconds(vm: Vm): number | null {
    if (this.activity.isHeld(vm.id)) return null;
    const last = Math.max(
      this.activity.lastUseOf(vm.id) ?? 0,
      vm.lastActivityAt ? Date.parse(vm.lastActivityAt) : 0,
      vm.startedAt ? Date.parse(vm.startedAt) : Date.parse(vm.createdAt),
    );
    return Math.max(0, (this.deps.clock.now().getTime() - last) / 1000);
  }

  /** One turn: pauses this node's VMs idle for their `auto_pause` (one at a time: each pause is heavy). */
  async pauseIdle(): Promise<number> {
    // A turn that pauses several VMs outlasts the interval: the next turn waits for it instead of overlapping.
    if (this.turn) return 0;
    this.turn = this.pauseIdleTurn().finally(() => (this.turn = null));
    return this.turn;
  }

  private async pauseIdleTurn(): Promise<number> {
    const now = this.deps.clock.now().getTime();
    for (const [vmId, until] of this.failedUntil) if (until <= now) this.failedUntil.delete(vmId);
    const candidates = await listAutoPauseCandidates(this.deps.database.db, this.deps.engine.nodeId);
    let paused = 0;
    for (const vm of candidates) {
      if (vm.autoPauseSeconds === null || this.failedUntil.has(vm.id) || this.pausing.has(vm.id)) continue;
      if (!this.deps.engine.agent(vm.id)) continue;
      const idle = this.idleSeconds(vm);
      if (idle === null || idle < vm.autoPauseSeconds) continue;
      if (await this.pauseOne(vm, idle)) paused++;
    }
    return paused;
  }

  private async pauseOne(vm: Vm, idleSeconds: number): Promise<boolean> {
    // Checked again just before: a use recorded while the previous VMs were being paused keeps this one.
    const idle = this.idleSeconds(vm);
    if (idle === null || idle < (vm.autoPauseSeconds ?? Infinity)) return false;
    this.pausing.add(vm.id);
    try {
      const { outcome } = await this.capture.pause(ownerOf(vm), vm);
      await recordEvent(this.deps.database.db, this.deps.clock, {
        type: 'vm.auto_paused',
        userId: vm.userId,
        subjectId: vm.id,
        data: { vm_id: vm.id, session_id: vm.sessionId, idle_seconds: Math.round(Math.max(idle, idleSeconds)), duration_ms: Math.round(outcome.durationMs) },
      });
      this.deps.notifier.committed();
      this.activity.forget(vm.id);
      return true;
    } catch (error) {
      this.failedUntil.set(vm.id, this.deps.clock.now().getTime() + RETRY_AFTER_FAILURE_MS);
      this.failures.report('auto_pause', new Error(`auto-pausing VM ${vm.id} failed (it keeps running): ${(error as Error).message}`, { cause: error }));
      return false;
    } finally {
      this.pausing.delete(vm.id);
    }
  }

  /**
   * A VM whose lifetime ends with `on_expiry: pause` (the engine's before-expiry hook): paused instead of killed,
   * and given its whole lifetime again for when it resumes (what was left of it is nothing). Answers whether it
   * was paused; when not (the pause failed), the engine kills it as it would have.
   */
  async pauseAtExpiry(vm: Vm): Promise<boolean> {
    if (this.pausing.has(vm.id)) return false;
    this.pausing.add(vm.id);
    try {
      const { vm: paused } = await this.capture.pause(ownerOf(vm), vm);
      await transitionVm(this.deps.database.db, vm.id, ['paused'], { remainingSeconds: paused.lifetimeSeconds });
      this.activity.forget(vm.id);
      return true;
    } catch (error) {
      this.failures.report(
        'pause_at_expiry',
        new Error(`pausing VM ${vm.id} at the end of its lifetime failed (it is killed): ${(error as Error).message}`, { cause: error }),
      );
      return false;
    } finally {
      this.pausing.delete(vm.id);
    }
  }

  /** One turn: deletes this node's paused VMs kept longer than their owner's plan allows. */
  async deleteExpiredPaused(): Promise<number> {
    const { database, clock, engine, limiter } = this.deps;
    const now = clock.now().getTime();
    // The shortest retention any plan could have bounds the query; each VM is checked against its own plan.
    // Pauses in the cluster's object store are any node's to delete (the first to record the end discards it): a
    // paused VM outlives its node. Else each node deletes its own.
    const nodeId = engine.portableCaptures ? null : engine.nodeId;
    const rows = await listPausedVmsWithPlans(database.db, nodeId, new Date(now - 60_000).toISOString(), RETENTION_BATCH);
    let deleted = 0;
    for (const { vm, plan } of rows) {
      const retentionSeconds = limiter.limitsOfPlan(plan).pausedRetentionSeconds;
      const pausedSeconds = (now - Date.parse(vm.pausedAt!)) / 1000;
      if (pausedSeconds < retentionSeconds) continue;
      const ended = await this.ends.record(vm.id, 'expired', ['paused'], (trx) =>
        recordEvent(trx, clock, {
          type: 'vm.pause_expired',
          userId: vm.userId,
          subjectId: vm.id,
          data: {
            vm_id: vm.id,
            session_id: vm.sessionId,
            paused_at: vm.pausedAt!,
            paused_seconds: Math.round(pausedSeconds),
            retention_seconds: retentionSeconds,
          },
        }),
      );
      if (!ended) continue;
      await engine.discardPause(vm.id);
      deleted++;
    }
    return deleted;
  }
}
