/**
 * The snapshots users take of their VMs: listing, deleting (refused while anything builds on one) and cloning
 * (new VMs, each in a session of its own, from a snapshot or from a VM's current state). Taking a snapshot is a
 * VM transition and lives in `vms/capture.ts`.
 */
import { randomBytes } from 'node:crypto';
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { decodeTimeCursor, encodeTimeCursor } from './cursor.ts';
import { AppError, notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import type { PlanLimiter } from './limits.ts';
import type { Session, Snapshot } from '../model.ts';
import type { SessionService } from './sessions.ts';
import type { VmEngine } from './vm-engine.ts';
import type { LiveVm, VmService } from './vms/index.ts';
import type { VmSources } from './vm-sources.ts';
import type { Database } from '../store/database.ts';
import { deleteSnapshotRow, findChildSnapshot, findSnapshotByName, listSnapshots, listSnapshotsFiltered } from '../store/snapshots-store.ts';
import { countLiveVms, snapshotInUseByVm } from '../store/vms-store.ts';

/** The most clones one request makes. */
export const MAX_CLONES = 10;

/** One VM a clone request made, with the session it belongs to. */
export interface Clone extends LiveVm {
  session: Session;
}

export class SnapshotService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly engine: VmEngine,
    private readonly sources: VmSources,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly limiter: PlanLimiter,
  ) {}

  list(principal: Principal, limit: number, offset: number): Promise<Snapshot[]> {
    return listSnapshots(this.database.db, principal.userId, limit, offset);
  }

  /**
   * A page of the caller's snapshots, newest first, optionally only those taken of the session `sessionId`'s VMs
   * or the one named `name`; `cursor` is the previous page's `nextCursor` (null: this was the last page).
   */
  async listPage(
    principal: Principal,
    options: { sessionId?: string; name?: string; cursor?: string; limit: number },
  ): Promise<{ items: Snapshot[]; nextCursor: string | null }> {
    const { cursor, limit, ...filters } = options;
    const rows = await listSnapshotsFiltered(this.database.db, principal.userId, {
      ...filters,
      limit: limit + 1,
      ...(cursor ? { after: decodeTimeCursor(cursor) } : {}),
    });
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > limit && last ? encodeTimeCursor(last) : null };
  }

  get(principal: Principal, id: string): Promise<Snapshot> {
    return this.sources.ownedSnapshot(principal.userId, id);
  }

  /**
   * Deletes a snapshot and its files. Refused (409) while another snapshot's disk layer or a VM that has not
   * ended (running or paused) builds on it: their disks name its layer.
   */
  async delete(principal: Principal, id: string): Promise<Snapshot> {
    const snapshot = await this.get(principal, id);
    if (snapshot.status === 'creating') throw new AppError('CONFLICT', `snapshot ${snapshot.name} is still being taken`);
    const child = await findChildSnapshot(this.database.db, id);
    if (child) throw new AppError('CONFLICT', `snapshot ${child.name} builds on snapshot ${snapshot.name}: delete it first`);
    const vm = await snapshotInUseByVm(this.database.db, id);
    if (vm) throw new AppError('CONFLICT', `VM ${vm.id} (${vm.status}) builds its disk on snapshot ${snapshot.name}: kill it first`);
    this.sources.assertLocal(snapshot, `snapshot ${snapshot.name}`);
    const deleted = await this.database.db.transaction().execute(async (trx) => {
      if (!(await deleteSnapshotRow(trx, id))) return false;
      await recordEvent(trx, this.clock, { type: 'snapshot.deleted', userId: principal.userId, subjectId: id, data: { snapshot_id: id, name: snapshot.name } });
      return true;
    });
    if (!deleted) throw notFound(`snapshot ${id}`);
    this.notifier.committed();
    await this.engine.deleteSnapshot(id);
    return snapshot;
  }

  /**
   * New VMs from the caller's snapshot named `snapshotName`, or, without one, from `vmId`'s current state (a live
   * snapshot taken for the purpose, named `<vm id>-clone-<time>`, returned with the clones: delete it once they
   * are gone). Each clone gets a session of its own with the source session's lifetime, metadata and env. All or
   * nothing: if one cannot start, those that did are killed.
   */
  async clone(
    principal: Principal,
    vmId: string,
    request: { snapshotName?: string | undefined; count: number },
  ): Promise<{ snapshot: Snapshot; clones: Clone[] }> {
    if (!Number.isInteger(request.count) || request.count < 1 || request.count > MAX_CLONES)
      throw new AppError('BAD_REQUEST', `count must be from 1 to ${MAX_CLONES}`);
    const vm = await this.vms.getOwned(principal, vmId);
    const limits = this.limiter.limitsOf(principal);
    const live = await countLiveVms(this.database.db, principal.userId);
    if (live.vms + request.count > limits.maxConcurrentVms || live.vcpus + request.count * vm.vcpuCount > limits.maxTotalVcpus) {
      throw new AppError(
        'QUOTA_EXCEEDED',
        `quota exceeded: ${request.count} clones of ${vm.vcpuCount} vCPUs each would make ${live.vms + request.count} VMs and ${live.vcpus + request.count * vm.vcpuCount} vCPUs; your plan (${principal.plan}) allows ${limits.maxConcurrentVms} and ${limits.maxTotalVcpus}`,
      );
    }
    let snapshot: Snapshot;
    if (request.snapshotName !== undefined) {
      const named = await findSnapshotByName(this.database.db, principal.userId, request.snapshotName);
      if (!named) throw notFound(`snapshot "${request.snapshotName}"`);
      snapshot = named;
    } else {
      const stamp = new Date(this.clock.now())
        .toISOString()
        .replace(/[-:.TZ]/g, '')
        .slice(0, 14);
      snapshot = await this.vms.snapshot(principal, vmId, { name: `${vm.id}-clone-${stamp}-${randomBytes(2).toString('hex')}` });
    }
    const source = await this.sources.resolve(principal.userId, { kind: 'snapshot', id: snapshot.id });
    const origin = vm.sessionId ? await this.sessions.find(vm.sessionId) : undefined;
    const results = await Promise.allSettled(
      Array.from({ length: request.count }, async () => {
        const session = await this.sessions.create(principal, {
          vmLifetimeSeconds: origin?.vmLifetimeSeconds ?? vm.lifetimeSeconds,
          vcpuCount: snapshot.vcpuCount,
          memoryMb: snapshot.memoryMb,
          metadata: origin?.metadata ?? {},
          env: origin?.env ?? {},
          source: source.ref,
        });
        const started = await this.vms.createForSession(principal, session, {
          vcpuCount: snapshot.vcpuCount,
          memoryMb: snapshot.memoryMb,
          lifetimeSeconds: session.vmLifetimeSeconds,
          source,
          metadata: vm.metadata,
          name: vm.name,
        });
        return { ...started, session };
      }),
    );
    const clones = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) {
      for (const clone of clones) await this.vms.kill(principal, clone.vm).catch(() => undefined);
      throw failure.reason;
    }
    await this.database.db.transaction().execute(async (trx) => {
      for (const clone of clones) {
        await recordEvent(trx, this.clock, {
          type: 'vm.cloned',
          userId: principal.userId,
          subjectId: clone.vm.id,
          data: { vm_id: clone.vm.id, session_id: clone.session.id, source_vm_id: vm.id, snapshot_id: snapshot.id },
        });
      }
    });
    this.notifier.committed();
    return { snapshot, clones };
  }
}
