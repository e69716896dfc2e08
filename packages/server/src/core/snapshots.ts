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
import { MAX_FORK_COUNT } from './plans.ts';
import type { Session, Snapshot, Vm } from '../model.ts';
import type { SessionService } from './sessions.ts';
import type { VmEngine } from './vm-engine.ts';
import type { LiveVm, VmService } from './vms/index.ts';
import type { VmSources } from './vm-sources.ts';
import type { Database } from '../store/database.ts';
import { deleteSessionsWithEndedVms } from '../store/sessions-store.ts';
import { deleteSnapshotRow, findChildSnapshot, findSnapshot, findSnapshotByName, listSnapshots, listSnapshotsFiltered } from '../store/snapshots-store.ts';
import { snapshotInUseByVm } from '../store/vms-store.ts';

/** The most clones one request makes, whatever the plan (each plan has its own cap: `maxForkCount`). */
export const MAX_CLONES = MAX_FORK_COUNT;

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
    /** Clones one fork starts at once (`SANDBOXD_FORK_CONCURRENCY`). */
    private readonly forkConcurrency: number,
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
   * POST /v1/vms/{vm_id}/clone: new VMs from the caller's snapshot named `snapshotName`, or, without one, from
   * `vmId`'s current state (a live snapshot taken for the purpose, named `<vm id>-clone-<time>`, returned with the
   * clones: the VM's disk now builds on it, so it stays while the VM lives). Each clone gets a session of its own
   * with the VM's session's lifetime, metadata and env. See `fork` for the rest.
   */
  async clone(
    principal: Principal,
    vmId: string,
    request: { snapshotName?: string | undefined; count: number; signal?: AbortSignal | undefined },
  ): Promise<{ snapshot: Snapshot; clones: Clone[] }> {
    assertForkCount(request.count);
    const vm = await this.vms.getOwned(principal, vmId);
    let named: Snapshot | undefined;
    if (request.snapshotName !== undefined) {
      named = await findSnapshotByName(this.database.db, principal.userId, request.snapshotName);
      if (!named) throw notFound(`snapshot "${request.snapshotName}"`);
    }
    await this.limiter.assertCanFork(this.database.db, principal, request.count, named?.vcpuCount ?? vm.vcpuCount);
    let snapshot: Snapshot;
    if (named) snapshot = named;
    else {
      const stamp = new Date(this.clock.now())
        .toISOString()
        .replace(/[-:.TZ]/g, '')
        .slice(0, 14);
      snapshot = await this.vms.snapshot(principal, vmId, { name: `${vm.id}-clone-${stamp}-${randomBytes(2).toString('hex')}` });
    }
    const clones = await this.fork(principal, snapshot, vm, request.count, request.signal);
    return { snapshot, clones };
  }

  /**
   * POST /v1/snapshots/{snapshot}/clone: new VMs from the caller's snapshot `idOrName` (its id, else its name).
   * Each clone gets a session of its own with the lifetime, metadata and env of the session of the VM the snapshot
   * was taken of, while that VM's record is there; else the defaults. See `fork` for the rest.
   */
  async cloneSnapshot(
    principal: Principal,
    idOrName: string,
    request: { count: number; signal?: AbortSignal | undefined },
  ): Promise<{ snapshot: Snapshot; clones: Clone[] }> {
    assertForkCount(request.count);
    const byId = await findSnapshot(this.database.db, idOrName);
    const snapshot = byId?.userId === principal.userId ? byId : await findSnapshotByName(this.database.db, principal.userId, idOrName);
    if (!snapshot) throw notFound(`snapshot ${idOrName}`);
    await this.limiter.assertCanFork(this.database.db, principal, request.count, snapshot.vcpuCount);
    const parent = snapshot.sourceVmId ? await this.vms.find(snapshot.sourceVmId) : undefined;
    const clones = await this.fork(principal, snapshot, parent?.userId === principal.userId ? parent : undefined, request.count, request.signal);
    return { snapshot, clones };
  }

  /**
   * Starts `count` VMs from `snapshot`, each in a new session, `forkConcurrency` at a time (the engine restores
   * as many at once as the host has cores; more clones under way would only queue there while each holds its
   * reservation, its session and, once restored, its memory, and a failure would have more to unwind). All or
   * nothing: on the first failure, or when `signal` says the caller went away, no more start; those under way
   * finish, then every clone that started is killed and its session and VM record deleted, and the first error
   * is thrown. A `vm.cloned` event per clone (after its `vm.started`) once all run.
   */
  private async fork(principal: Principal, snapshot: Snapshot, parent: Vm | undefined, count: number, signal: AbortSignal | undefined): Promise<Clone[]> {
    const source = await this.sources.resolve(principal.userId, { kind: 'snapshot', id: snapshot.id });
    const origin = parent?.sessionId ? await this.sessions.find(parent.sessionId) : undefined;
    const lifetimeSeconds = origin?.vmLifetimeSeconds ?? parent?.lifetimeSeconds ?? this.sessions.specFor().vmLifetimeSeconds;
    const clones: Clone[] = [];
    const sessionIds: string[] = [];
    let failure: { error: unknown } | undefined;
    let taken = 0;
    const startOne = async (): Promise<void> => {
      const session = await this.sessions.create(principal, {
        vmLifetimeSeconds: lifetimeSeconds,
        vcpuCount: snapshot.vcpuCount,
        memoryMb: snapshot.memoryMb,
        metadata: origin?.metadata ?? {},
        env: origin?.env ?? {},
        source: source.ref,
      });
      sessionIds.push(session.id);
      const started = await this.vms.createForSession(principal, session, {
        vcpuCount: snapshot.vcpuCount,
        memoryMb: snapshot.memoryMb,
        lifetimeSeconds,
        source,
        metadata: parent?.metadata ?? {},
        name: parent?.name ?? null,
      });
      clones.push({ ...started, session });
    };
    const worker = async (): Promise<void> => {
      while (!failure && taken < count) {
        if (signal?.aborted) {
          failure = { error: new AppError('SERVICE_UNAVAILABLE', `the fork of snapshot ${snapshot.name} was abandoned: its client went away`) };
          break;
        }
        taken += 1;
        await startOne().catch((error: unknown) => {
          failure ??= { error };
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.forkConcurrency, count) }, worker));
    if (!failure && signal?.aborted)
      failure = { error: new AppError('SERVICE_UNAVAILABLE', `the fork of snapshot ${snapshot.name} was abandoned: its client went away`) };
    if (failure) {
      await this.unwind(principal, clones, sessionIds);
      throw failure.error;
    }
    await this.database.db.transaction().execute(async (trx) => {
      for (const clone of clones) {
        await recordEvent(trx, this.clock, {
          type: 'vm.cloned',
          userId: principal.userId,
          subjectId: clone.vm.id,
          data: { vm_id: clone.vm.id, session_id: clone.session.id, source_vm_id: parent?.id ?? snapshot.sourceVmId, snapshot_id: snapshot.id },
        });
      }
    });
    this.notifier.committed();
    return clones;
  }

  /** A failed fork's clean-up: its clones killed, then their sessions and VM records deleted (failed starts' too). */
  private async unwind(principal: Principal, clones: Clone[], sessionIds: string[]): Promise<void> {
    const queue = [...clones];
    await Promise.all(
      Array.from({ length: Math.min(this.forkConcurrency, queue.length) }, async () => {
        for (let clone = queue.shift(); clone; clone = queue.shift()) await this.vms.kill(principal, clone.vm).catch(() => undefined);
      }),
    );
    await this.database.db.transaction().execute((trx) => deleteSessionsWithEndedVms(trx, sessionIds));
  }
}

/** 400 unless 1 <= count <= MAX_CLONES (the plan's own cap is the limiter's). */
function assertForkCount(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > MAX_CLONES) throw new AppError('BAD_REQUEST', `count must be from 1 to ${MAX_CLONES}`);
}
