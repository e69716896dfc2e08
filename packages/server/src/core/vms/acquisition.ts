/**
 * A new VM for a session: placed (here, or on another node of the cluster), reserved in the store with the quota
 * check ('starting'), started by the engine (its egress rules applied before it runs), recorded active with its
 * `vm.started` event, and made ready for its session (readiness.ts) before anyone gets it. One acquisition (or
 * resume) at a time per session: concurrent callers share it.
 */
import type { Session, Vm } from '../../model.ts';
import { upsertEgressPolicy } from '../../store/egress-store.ts';
import { findSession, updateSession } from '../../store/sessions-store.ts';
import { findVm, insertVm, transitionVm } from '../../store/vms-store.ts';
import { findSessionVolumes, replaceSessionVolumes } from '../../store/volumes-store.ts';
import type { Principal } from '../authenticator.ts';
import { AppError } from '../errors.ts';
import { recordEvent } from '../events.ts';
import { newVmId } from '../ids.ts';
import { lockUser } from '../user-lock.ts';
import type { AcquiredVm } from '../vm-engine.ts';
import type { ResolvedSource } from '../vm-sources.ts';
import { attachVolumes } from '../volumes.ts';
import type { VmCluster } from './cluster.ts';
import { reportStartFailed, runReadySteps, type VmReadiness } from './readiness.ts';
import type { VmRecovery } from './recovery.ts';
import type { LiveVm, VmServiceDeps, VmSpec } from './types.ts';

export class VmAcquisition {
  /** One acquisition (or resume) at a time per session, so concurrent executes share one new VM. */
  private readonly acquiring = new Map<string, Promise<LiveVm>>();

  constructor(
    private readonly deps: VmServiceDeps,
    private readonly recovery: VmRecovery,
    private readonly cluster: VmCluster,
    private readonly readiness: () => VmReadiness,
  ) {}

  /** The acquisition (or resume) under way for the session, if any. */
  pending(sessionId: string): Promise<LiveVm> | undefined {
    return this.acquiring.get(sessionId);
  }

  /** Runs `start` as the session's one acquisition, unless one is under way: later callers share it. */
  join(sessionId: string, start: () => Promise<LiveVm>): Promise<LiveVm> {
    const pending = this.acquiring.get(sessionId);
    if (pending) return pending;
    const acquisition = start().finally(() => this.acquiring.delete(sessionId));
    this.acquiring.set(sessionId, acquisition);
    return acquisition;
  }

  /**
   * A new VM for `session` with `requested`'s shape: on another node when placement says so (unless `placedHere`:
   * another node placed it here already), else here.
   */
  async acquire(principal: Principal, session: Session, asked: VmSpec, placedHere = false): Promise<LiveVm> {
    // Volumes the caller names become the session's (recorded with the reservation); without any named, the VM
    // mounts the session's own, as its previous VMs did.
    const ownVolumes = asked.volumes === undefined;
    const requested = ownVolumes ? { ...asked, volumes: await findSessionVolumes(this.deps.database.db, session.id) } : asked;
    const elsewhere = placedHere ? null : await this.cluster.placeElsewhere(session, requested);
    if (elsewhere) return this.cluster.startElsewhere(elsewhere, principal, session, requested);
    await this.recovery.ensureStarted();
    const source = requested.source ?? (await this.deps.sources.resolve(session.userId, session.source));
    // A snapshot fixes the VM's shape.
    const spec = { ...requested, ...(source.shape ?? {}) };
    const { vmId, reserved, volumes } = await this.reserve(principal, session, spec, source, !ownVolumes);
    if (reserved) spec.onReserved?.(reserved);
    let acquired: AcquiredVm;
    try {
      // Volumes another node wrote last: their images come from the object store first.
      for (const mount of volumes) if (mount.fetch) await this.deps.engine.fetchVolume(mount.volumeId);
      acquired = await this.deps.engine.acquire({
        vmId,
        source: source.source,
        vcpuCount: spec.vcpuCount,
        memoryMb: spec.memoryMb,
        lifetimeSeconds: spec.lifetimeSeconds,
        diskMb: this.deps.limiter.limitsOf(principal).diskMb,
        ...(volumes.length > 0 ? { volumes } : {}),
        prepareNetwork: async (target) => {
          if (!reserved) throw new AppError('VM_UNAVAILABLE', 'the VM ended while it was starting');
          await this.readiness().beforeRun(reserved, 'new', target);
        },
      });
    } catch (error) {
      throw await this.failed(principal, session, vmId, error);
    }
    const vm = await this.activate(principal, session, spec, source, acquired);
    const agent = this.deps.engine.agent(vmId);
    if (!vm || !agent) {
      // Killed (or crashed) between restore and commit: the caller must not get a dead VM.
      reportStartFailed(this.readiness(), vmId);
      await this.deps.engine.kill(vmId);
      throw new AppError('VM_UNAVAILABLE', `VM ${vmId} ended while it was starting`);
    }
    const live = { vm, agent };
    // The session as it is now (its env may have changed while the VM started).
    const fresh = (await findSession(this.deps.database.db, session.id)) ?? session;
    await runReadySteps(this.readiness().ready, fresh, live);
    return live;
  }

  /**
   * Quota check and reservation in one transaction, so two acquisitions of one user cannot both pass (nor two
   * writers of one volume): the VM 'starting', the session's current VM, the VM's own egress policy, its volumes
   * (with `recordVolumes`, also as the volumes of the session's next VMs).
   */
  private async reserve(principal: Principal, session: Session, spec: VmSpec, source: ResolvedSource, recordVolumes: boolean) {
    const { database, clock, limiter } = this.deps;
    const now = clock.now();
    const vmId = newVmId();
    const volumes = await database.db.transaction().execute(async (trx) => {
      await lockUser(trx, database.dialect, principal.userId);
      await limiter.assertCanStartVm(trx, principal, spec.vcpuCount);
      await insertVm(trx, {
        id: vmId,
        userId: principal.userId,
        sessionId: session.id,
        nodeId: this.cluster.nodeId,
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
        autoPauseSeconds: spec.autoPauseSeconds !== undefined ? spec.autoPauseSeconds : session.autoPauseSeconds,
        onExpiry: spec.onExpiry ?? session.onExpiry,
        lastActivityAt: now.toISOString(),
      });
      if (spec.egressPolicy) await upsertEgressPolicy(trx, 'vm', vmId, principal.userId, JSON.stringify(spec.egressPolicy), now.toISOString());
      await updateSession(trx, session.id, { currentVmId: vmId });
      const mounts = await attachVolumes(trx, clock, principal.userId, vmId, this.cluster.ownership, spec.volumes ?? [], this.deps.engine.portableCaptures);
      if (recordVolumes) await replaceSessionVolumes(trx, session.id, mounts);
      return mounts;
    });
    const reserved: Vm | undefined = await findVm(database.db, vmId);
    return { vmId, reserved, volumes };
  }

  /** The engine could not start it: recorded failed (`vm.failed`); answers the error for the caller. */
  private async failed(principal: Principal, session: Session, vmId: string, error: unknown): Promise<AppError> {
    const { database, clock, notifier } = this.deps;
    reportStartFailed(this.readiness(), vmId);
    await database.db.transaction().execute(async (trx) => {
      await transitionVm(trx, vmId, ['starting'], { status: 'killed', endReason: 'failed', endedAt: clock.now().toISOString() });
      await recordEvent(trx, clock, {
        type: 'vm.failed',
        userId: principal.userId,
        subjectId: vmId,
        data: { vm_id: vmId, session_id: session.id, reason: 'error', error: (error as Error).message },
      });
    });
    notifier.committed();
    if (error instanceof AppError) return error; // the engine's own verdict, e.g. HOST_STORAGE_LOW
    return new AppError('VM_UNAVAILABLE', `could not start a VM: ${(error as Error).message}`);
  }

  /** Records the started VM active with its `vm.started` event; undefined when it ended meanwhile. */
  private async activate(principal: Principal, session: Session, spec: VmSpec, source: ResolvedSource, acquired: AcquiredVm): Promise<Vm | undefined> {
    const { database, clock, notifier } = this.deps;
    const vm = await database.db.transaction().execute(async (trx) => {
      const row = await transitionVm(trx, acquired.vmId, ['starting'], {
        status: 'active',
        ip: acquired.ip,
        startedAt: acquired.startedAt.toISOString(),
        expiresAt: acquired.expiresAt.toISOString(),
      });
      if (!row) return undefined;
      await recordEvent(trx, clock, {
        type: 'vm.started',
        userId: principal.userId,
        subjectId: acquired.vmId,
        data: {
          vm_id: acquired.vmId,
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
    notifier.committed();
    return vm;
  }
}
