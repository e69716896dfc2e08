/**
 * Persistent volumes: a user's ext4 filesystems on one node, which outlive VMs. A VM mounts up to
 * `MAX_VOLUMES_PER_VM` of them (`attachVolumes`, inside the transaction that reserves the VM); one writer at a
 * time: a volume mounted read-write by a VM that has not ended cannot be mounted by another VM at all, and one
 * mounted read-only anywhere cannot be mounted read-write. A user's volumes together may take their plan's
 * `diskMb` (the same disk budget a VM's root disk gets).
 */
import type { Principal } from './authenticator.ts';
import type { Ownership } from './cluster/ownership.ts';
import type { Clock } from './clock.ts';
import { AppError, notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { newVolumeId } from './ids.ts';
import type { PlanLimiter } from './limits.ts';
import type { Volume, VolumeAttachment } from '../model.ts';
import { MAX_VOLUMES_PER_VM, type VmEngine, type VolumeMount } from './vm-engine.ts';
import { lockUser } from './user-lock.ts';
import { mountPathProblem } from './volume-paths.ts';
import { type Database, isUniqueViolation, type Executor } from '../store/database.ts';
import {
  deleteVolumeRow,
  findVolume,
  insertVolume,
  insertVolumeAttachment,
  listVolumes,
  openAttachments,
  setVolumeHome,
  totalVolumeMb,
} from '../store/volumes-store.ts';

/** The smallest volume, MiB (ext4's journal and metadata need a few). */
export const MIN_VOLUME_MB = 16;

/** A volume a new VM asks to mount. */
export interface VolumeRequest {
  volumeId: string;
  mountPath: string;
  readOnly: boolean;
}

/** A volume with the mounts of VMs that have not ended. */
export interface VolumeInUse {
  volume: Volume;
  attachments: VolumeAttachment[];
}

export class VolumeService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly engine: VmEngine,
    private readonly limiter: PlanLimiter,
    private readonly ownership: Ownership,
  ) {}

  /** Makes a volume on this node: its image first (formatting takes a moment), then its record. */
  async create(principal: Principal, request: { name: string; sizeMb: number }): Promise<Volume> {
    const { name, sizeMb } = request;
    const budgetMb = this.limiter.limitsOf(principal).diskMb;
    if (!Number.isInteger(sizeMb) || sizeMb < MIN_VOLUME_MB) throw new AppError('BAD_REQUEST', `a volume has at least ${MIN_VOLUME_MB} MiB`);
    const assertRoom = async (db: Executor) => {
      const used = await totalVolumeMb(db, principal.userId);
      if (used + sizeMb > budgetMb) {
        throw new AppError(
          'QUOTA_EXCEEDED',
          `quota exceeded: your plan (${principal.plan}) allows ${budgetMb} MiB of volumes; you have ${used} MiB and asked for ${sizeMb} more`,
        );
      }
    };
    await assertRoom(this.database.db);
    const volume: Volume = {
      id: newVolumeId(),
      userId: principal.userId,
      name,
      sizeMb,
      nodeId: this.ownership.nodeId,
      inStore: false,
      createdAt: this.clock.now().toISOString(),
    };
    await this.engine.createVolume(volume.id, sizeMb);
    // With the cluster's object store, its empty filesystem is there from the start: any node may mount it first.
    if (this.engine.portableCaptures) {
      await this.engine
        .publishVolume(volume.id, { userId: principal.userId })
        .then(() => (volume.inStore = true))
        .catch(() => undefined);
    }
    try {
      const created = await this.database.db.transaction().execute(async (trx) => {
        await lockUser(trx, this.database.dialect, principal.userId);
        await assertRoom(trx);
        const row = await insertVolume(trx, volume);
        await recordEvent(trx, this.clock, {
          type: 'volume.created',
          userId: principal.userId,
          subjectId: volume.id,
          data: { volume_id: volume.id, name, size_mb: sizeMb },
        });
        return row;
      });
      this.notifier.committed();
      return created;
    } catch (error) {
      await this.engine.deleteVolume(volume.id).catch(() => undefined);
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', `you have a volume named ${JSON.stringify(name)} already`);
      throw error;
    }
  }

  async list(principal: Principal, limit: number, offset: number): Promise<VolumeInUse[]> {
    const volumes = await listVolumes(this.database.db, principal.userId, limit, offset);
    const open = await openAttachments(
      this.database.db,
      volumes.map((volume) => volume.id),
    );
    return volumes.map((volume) => ({ volume, attachments: open.filter((attachment) => attachment.volumeId === volume.id) }));
  }

  /** One of the caller's volumes; another user's is NOT_FOUND, as a missing one. */
  async get(principal: Principal, id: string): Promise<VolumeInUse> {
    const volume = await findVolume(this.database.db, id);
    if (!volume || volume.userId !== principal.userId) throw notFound(`volume ${id}`);
    return { volume, attachments: await openAttachments(this.database.db, [id]) };
  }

  /** Deletes a volume and its image; refused (409) while a VM that has not ended has it mounted. */
  async delete(principal: Principal, id: string): Promise<Volume> {
    const { volume, attachments } = await this.get(principal, id);
    if (attachments.length > 0) throw new AppError('CONFLICT', `volume ${volume.name} is mounted by VM ${attachments[0]!.vmId}: kill that VM first`);
    this.ownership.assertLocal(volume, `volume ${volume.name} is`);
    const deleted = await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, principal.userId);
      // Checked again under the lock: a VM reserved meanwhile records its attachment under the same lock.
      if ((await openAttachments(trx, [id])).length > 0) throw new AppError('CONFLICT', `volume ${volume.name} was just mounted by a VM`);
      if (!(await deleteVolumeRow(trx, id))) return false;
      await recordEvent(trx, this.clock, { type: 'volume.deleted', userId: principal.userId, subjectId: id, data: { volume_id: id, name: volume.name } });
      return true;
    });
    if (!deleted) throw notFound(`volume ${id}`);
    this.notifier.committed();
    await this.engine.deleteVolume(id);
    return volume;
  }
}

/**
 * Records that VM `vmId` (being reserved in `trx`, under the user's lock) mounts `requests`, slot `i` holding
 * `requests[i]`, after checking that they are the user's, on this node, at distinct valid paths, and free for
 * the asked mode. Answers what the engine needs to mount them.
 */
export async function attachVolumes(
  trx: Executor,
  clock: Clock,
  userId: number,
  vmId: string,
  ownership: Ownership,
  requests: readonly VolumeRequest[],
  portable = false,
): Promise<VolumeMount[]> {
  if (requests.length > MAX_VOLUMES_PER_VM) throw new AppError('BAD_REQUEST', `a VM mounts at most ${MAX_VOLUMES_PER_VM} volumes`);
  const ids = new Set<string>();
  const paths = new Set<string>();
  for (const request of requests) {
    const problem = mountPathProblem(request.mountPath);
    if (problem) throw new AppError('BAD_REQUEST', problem);
    if (ids.has(request.volumeId)) throw new AppError('BAD_REQUEST', `volume ${request.volumeId} is given twice`);
    if (paths.has(request.mountPath)) throw new AppError('BAD_REQUEST', `two volumes are mounted at ${request.mountPath}`);
    const nested = [...paths].find((other) => request.mountPath.startsWith(`${other}/`) || other.startsWith(`${request.mountPath}/`));
    if (nested) throw new AppError('BAD_REQUEST', `mount paths ${nested} and ${request.mountPath} are nested: give each volume a place of its own`);
    ids.add(request.volumeId);
    paths.add(request.mountPath);
  }
  const open = await openAttachments(trx, [...ids]);
  const mounts: VolumeMount[] = [];
  for (const [slot, request] of requests.entries()) {
    const volume = await findVolume(trx, request.volumeId);
    if (!volume || volume.userId !== userId) throw notFound(`volume ${request.volumeId}`);
    const others = open.filter((attachment) => attachment.volumeId === volume.id);
    const writer = others.find((attachment) => !attachment.readOnly);
    if (writer)
      throw new AppError('CONFLICT', `volume ${volume.name} is mounted read-write by VM ${writer.vmId}: one VM at a time may mount a volume it writes`);
    if (!request.readOnly && others.length > 0) {
      throw new AppError(
        'CONFLICT',
        `volume ${volume.name} is mounted read-only by VM ${others[0]!.vmId}: it can be mounted read-write once no VM has it mounted`,
      );
    }
    // Checked after the writers: a volume another VM writes is a 409 wherever its data is.
    const fetch = !ownership.isLocal(volume);
    if (fetch) assertFetchable(volume, ownership, portable);
    await insertVolumeAttachment(trx, {
      volumeId: volume.id,
      vmId,
      slot,
      mountPath: request.mountPath,
      readOnly: request.readOnly,
      createdAt: clock.now().toISOString(),
    });
    // A writer here makes this node the one with its latest data (the store's copy is older from now on).
    if (portable && !request.readOnly) await setVolumeHome(trx, volume.id, { nodeId: ownership.nodeId, inStore: false });
    mounts.push({ volumeId: volume.id, mountPath: request.mountPath, readOnly: request.readOnly, ...(fetch ? { fetch: true } : {}) });
  }
  return mounts;
}

/**
 * A volume whose latest image is on another node is mounted here only when the cluster's object store has that data
 * (its last writer ended or paused, and its upload completed); else 503 naming the node that has it.
 */
export function assertFetchable(volume: Volume, ownership: Ownership, portable: boolean): void {
  if (!portable) ownership.assertLocal(volume, `volume ${volume.name} is`, 'start the VM there');
  else if (!volume.inStore)
    throw new AppError(
      'VM_UNAVAILABLE',
      `volume ${volume.name}'s latest data is on node ${volume.nodeId} only (its last writer's upload to the object store has not completed): start the VM there, or retry`,
    );
}
