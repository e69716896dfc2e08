/**
 * Captures of a running VM: a snapshot (the VM runs on; new VMs can start from it) and a pause (the VM's memory,
 * processes and disk go to this node's disk and its QEMU ends), and the resume of a paused VM. Each works on the
 * node that holds the VM. A VM's volumes are unmounted in the guest for the moment of a snapshot (which holds none
 * of them) and stay mounted through a pause (they come back in the same slots at the resume).
 */
import { DEFAULT_TEMPLATE_ID, type Snapshot, type Vm } from '../../model.ts';
import { isUniqueViolation } from '../../store/database.ts';
import { completeSnapshot, deleteSnapshotRow, findSnapshot, insertSnapshot } from '../../store/snapshots-store.ts';
import { transitionVm } from '../../store/vms-store.ts';
import type { Principal } from '../authenticator.ts';
import { AppError } from '../errors.ts';
import { recordEvent } from '../events.ts';
import { endInFlightExecutions, PAUSED_ERROR } from '../execution-ends.ts';
import { newSnapshotId } from '../ids.ts';
import { lockUser } from '../user-lock.ts';
import { PauseNotUploaded, type AcquiredVm, type CaptureOutcome } from '../vm-engine.ts';
import type { VmAcquisition } from './acquisition.ts';
import type { VmCluster } from './cluster.ts';
import type { PreStopHooks } from './pre-stop.ts';
import { reportStartFailed, type VmReadiness } from './readiness.ts';
import { publishVolumes, volumesForResume } from './volume-transfer.ts';
import { pythonContextOf, type LiveVm, type VmServiceDeps } from './types.ts';

export class VmCapture {
  constructor(
    private readonly deps: VmServiceDeps,
    private readonly cluster: VmCluster,
    private readonly acquisition: VmAcquisition,
    private readonly preStop: PreStopHooks,
    private readonly readiness: () => VmReadiness,
  ) {}

  /**
   * Snapshots the caller's running VM, live: a new VM (or many) can start from it later, with its memory,
   * processes and disk as they were. The name is reserved first (unique among the user's snapshots and
   * templates); the VM's disk builds on the snapshot from now on.
   */
  async snapshot(principal: Principal, vm: Vm, request: { name: string; metadata?: Record<string, string> }): Promise<Snapshot> {
    const { database, engine, clock, notifier, sources } = this.deps;
    assertRunning(vm, 'snapshotted');
    this.cluster.assertLocal(vm);
    const id = newSnapshotId();
    const now = clock.now().toISOString();
    // Read before the transaction: on SQLite it holds the one connection, and a read outside it would wait forever.
    const templateId = await this.templateIdOf(vm);
    try {
      await database.db.transaction().execute(async (trx) => {
        await sources.assertNameFree(trx, principal.userId, request.name);
        await insertSnapshot(trx, {
          id,
          userId: principal.userId,
          name: request.name,
          status: 'creating',
          sourceVmId: vm.id,
          parentId: vm.baseSnapshotId,
          templateId,
          nodeId: engine.nodeId,
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
      outcome = await engine.snapshot(vm.id, id, { userId: principal.userId });
    } catch (error) {
      await deleteSnapshotRow(database.db, id);
      await engine.deleteSnapshot(id);
      throw captureError(error, `snapshotting VM ${vm.id}`);
    }
    const snapshot = await database.db.transaction().execute(async (trx) => {
      const done = await completeSnapshot(trx, id, { ...outcome, pauseMs: outcome.pausedMs });
      await transitionVm(trx, vm.id, ['active'], { baseSnapshotId: id });
      await recordEvent(trx, clock, {
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
    notifier.committed();
    return snapshot;
  }

  /**
   * Pauses the caller's running VM: memory, processes and disk go to this node's disk, its QEMU ends (freeing
   * memory and CPU, and its place in the plan's quota). Its lifetime stops counting until it is resumed (by
   * `resume` or the session's next use). Executions running in it end (their processes go on after the resume).
   */
  async pause(principal: Principal, vm: Vm): Promise<{ vm: Vm; outcome: CaptureOutcome }> {
    const { database, engine, clock, notifier } = this.deps;
    if (vm.status === 'paused') throw new AppError('CONFLICT', `VM ${vm.id} is paused already`);
    assertRunning(vm, 'paused');
    this.cluster.assertLocal(vm);
    await this.preStop.run(vm, 'pause');
    const remainingSeconds = Math.max(1, Math.round((Date.parse(vm.expiresAt) - clock.now().getTime()) / 1000));
    let outcome: CaptureOutcome;
    try {
      outcome = await engine.pause(vm.id, { userId: principal.userId });
    } catch (error) {
      if (error instanceof PauseNotUploaded) throw await this.runOn(principal, vm, remainingSeconds, error);
      throw captureError(error, `pausing VM ${vm.id}`);
    }
    // Its volumes' images as they were at the pause (flushed; still mounted in the saved guest) go with it, so that
    // it may resume on another node.
    await publishVolumes(this.deps, vm.id);
    const at = clock.now().toISOString();
    const paused = await database.db.transaction().execute(async (trx) => {
      const row = await transitionVm(trx, vm.id, ['active'], { status: 'paused', pausedAt: at, remainingSeconds });
      if (!row) return undefined;
      await endInFlightExecutions(trx, clock, { vmId: vm.id }, PAUSED_ERROR);
      await recordEvent(trx, clock, {
        type: 'vm.paused',
        userId: principal.userId,
        subjectId: vm.id,
        data: {
          vm_id: vm.id,
          session_id: vm.sessionId,
          paused_at: at,
          remaining_seconds: remainingSeconds,
          duration_ms: Math.round(outcome.durationMs),
          memory_bytes: outcome.memoryBytes,
        },
      });
      return row;
    });
    if (!paused) {
      // It was killed meanwhile: nothing will resume it.
      await engine.discardPause(vm.id);
      throw new AppError('CONFLICT', `VM ${vm.id} ended while it was being paused`);
    }
    notifier.committed();
    return { vm: paused, outcome };
  }

  /**
   * A pause the object store did not take (it was down): the VM is brought back here from its capture, as it was,
   * and the caller is told why it is not paused. Should that fail too, the capture is still here: the VM is recorded
   * paused on this node (resumable here only), so nothing is lost either way.
   */
  private async runOn(principal: Principal, vm: Vm, remainingSeconds: number, failure: PauseNotUploaded): Promise<AppError> {
    const { database, engine, limiter } = this.deps;
    const reason = failure.reason instanceof AppError ? failure.reason : new AppError('OBJECT_STORE_UNAVAILABLE', failure.reason.message);
    try {
      await engine.resume({
        vmId: vm.id,
        lifetimeSeconds: remainingSeconds,
        diskMb: limiter.limitsOf(principal).diskMb,
        volumes: await volumesForResume(this.deps, this.cluster.ownership, vm.id),
        prepareNetwork: (target) => this.readiness().beforeRun(vm, 'resumed', target),
      });
      await this.readiness().resumed(vm);
      return new AppError(reason.code, `${reason.message}; VM ${vm.id} was not paused: it runs on as it was`);
    } catch (error) {
      const at = this.deps.clock.now().toISOString();
      await transitionVm(database.db, vm.id, ['active'], { status: 'paused', pausedAt: at, remainingSeconds });
      this.deps.notifier.committed();
      return new AppError(
        reason.code,
        `${reason.message}; VM ${vm.id} could not run on either (${(error as Error).message}): it is paused on node ${this.cluster.nodeId} only`,
      );
    }
  }

  /** Resumes the caller's paused VM (see `pause`); within the plan's quota, like a new VM. */
  async resume(principal: Principal, vm: Vm): Promise<LiveVm> {
    if (vm.status !== 'paused') throw new AppError('CONFLICT', `VM ${vm.id} is ${vm.status}, not paused`);
    const start = () => this.resumePaused(principal, vm);
    return vm.sessionId ? this.acquisition.join(vm.sessionId, start) : start();
  }

  /**
   * Resumes a paused VM (the caller joined the session's acquisitions): here, or on another node when its pause is
   * in the cluster's object store and this node is drained or full (`placedHere`: another node placed it here).
   */
  async resumePaused(principal: Principal, vm: Vm, options: { placedHere?: boolean; auto?: boolean } = {}): Promise<LiveVm> {
    const auto = options.auto === true;
    const elsewhere = options.placedHere ? null : await this.cluster.resumeElsewhere(vm);
    if (elsewhere) return this.cluster.resumeOn(elsewhere, principal, vm, auto);
    const { database, engine, clock, notifier, limiter } = this.deps;
    this.cluster.assertPauseReachable(vm);
    const started = Date.now();
    await database.db.transaction().execute(async (trx) => {
      await lockUser(trx, database.dialect, principal.userId);
      await limiter.assertCanStartVm(trx, principal, vm.vcpuCount);
      // Reserved as a VM that starts (here): it counts against the quota from now on.
      const row = await transitionVm(trx, vm.id, ['paused'], { status: 'starting', nodeId: this.cluster.nodeId });
      if (!row) throw new AppError('CONFLICT', `VM ${vm.id} is not paused any more (resumed or killed meanwhile)`);
    });
    let acquired: AcquiredVm;
    try {
      acquired = await engine.resume({
        vmId: vm.id,
        lifetimeSeconds: vm.remainingSeconds ?? vm.lifetimeSeconds,
        diskMb: limiter.limitsOf(principal).diskMb,
        volumes: await volumesForResume(this.deps, this.cluster.ownership, vm.id),
        prepareNetwork: (target) => this.readiness().beforeRun(vm, 'resumed', target),
      });
    } catch (error) {
      reportStartFailed(this.readiness(), vm.id);
      // Its saved state is untouched: it stays paused, to be resumed again.
      await transitionVm(database.db, vm.id, ['starting'], { status: 'paused' });
      throw captureError(error, `resuming VM ${vm.id}`);
    }
    const resumed = await database.db.transaction().execute(async (trx) => {
      const row = await transitionVm(trx, vm.id, ['starting'], {
        status: 'active',
        startedAt: acquired.startedAt.toISOString(),
        expiresAt: acquired.expiresAt.toISOString(),
        pausedAt: null,
        remainingSeconds: null,
      });
      if (!row) return undefined;
      await recordEvent(trx, clock, {
        type: 'vm.resumed',
        userId: principal.userId,
        subjectId: vm.id,
        data: {
          vm_id: vm.id,
          session_id: vm.sessionId,
          resume_ms: Date.now() - started,
          expires_at: acquired.expiresAt.toISOString(),
          auto,
          node_id: this.cluster.nodeId,
        },
      });
      return row;
    });
    notifier.committed();
    const agent = engine.agent(vm.id);
    if (!resumed || !agent) {
      reportStartFailed(this.readiness(), vm.id);
      await engine.kill(vm.id);
      throw new AppError('VM_UNAVAILABLE', `VM ${vm.id} ended while it was resuming`);
    }
    try {
      await this.readiness().resumed(resumed);
    } catch (error) {
      await engine.kill(vm.id);
      throw error;
    }
    return { vm: resumed, agent };
  }

  /** The template a VM's chain starts from: its own, or its base snapshot's (older records named the variant). */
  private async templateIdOf(vm: Vm): Promise<string> {
    if (vm.baseSnapshotId) return (await findSnapshot(this.deps.database.db, vm.baseSnapshotId))?.templateId ?? DEFAULT_TEMPLATE_ID;
    return /^snap\d+$/.test(vm.templateId) ? DEFAULT_TEMPLATE_ID : vm.templateId;
  }
}

function assertRunning(vm: Vm, what: string): void {
  if (vm.status === 'paused') throw new AppError('CONFLICT', `VM ${vm.id} is paused: resume it before it can be ${what}`);
  if (vm.status !== 'active') throw new AppError('CONFLICT', `VM ${vm.id} is ${vm.status}: only a running VM can be ${what}`);
}

/** An engine error of a capture or resume as the API answers it (the engine's own AppErrors pass through). */
function captureError(error: unknown, what: string): AppError {
  if (error instanceof AppError) return error;
  return new AppError('VM_UNAVAILABLE', `${what} failed: ${(error as Error).message}`);
}
