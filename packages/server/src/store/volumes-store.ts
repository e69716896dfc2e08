/** Persistence of persistent volumes and of which VMs mounted them. */
import type { Volume, VolumeAttachment } from '../model.ts';
import type { Selectable } from 'kysely';
import type { VolumeAttachmentsTable, VolumeRow } from './schema.ts';
import type { Executor } from './database.ts';

function toVolume(row: VolumeRow): Volume {
  return { id: row.id, userId: row.user_id, name: row.name, sizeMb: row.size_mb, nodeId: row.node_id, inStore: row.in_store === 1, createdAt: row.created_at };
}

/** Where a volume's latest data is: `nodeId`'s disk, and also the object store when `inStore`. */
export async function setVolumeHome(db: Executor, id: string, home: { nodeId?: string; inStore: boolean }): Promise<void> {
  await db
    .updateTable('volumes')
    .set({ ...(home.nodeId !== undefined ? { node_id: home.nodeId } : {}), in_store: home.inStore ? 1 : 0 })
    .where('id', '=', id)
    .execute();
}

function toAttachment(row: Selectable<VolumeAttachmentsTable>): VolumeAttachment {
  return {
    volumeId: row.volume_id,
    vmId: row.vm_id,
    slot: row.slot,
    mountPath: row.mount_path,
    readOnly: row.read_only === 1,
    createdAt: row.created_at,
  };
}

export async function insertVolume(db: Executor, volume: Volume): Promise<Volume> {
  const row = await db
    .insertInto('volumes')
    .values({
      id: volume.id,
      user_id: volume.userId,
      name: volume.name,
      size_mb: volume.sizeMb,
      node_id: volume.nodeId,
      in_store: volume.inStore ? 1 : 0,
      created_at: volume.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toVolume(row);
}

export async function findVolume(db: Executor, id: string): Promise<Volume | undefined> {
  const row = await db.selectFrom('volumes').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toVolume(row);
}

/** The user's volumes, newest first. */
export async function listVolumes(db: Executor, userId: number, limit: number, offset: number): Promise<Volume[]> {
  const rows = await db
    .selectFrom('volumes')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toVolume);
}

/** MiB the user's volumes take together. */
export async function totalVolumeMb(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('volumes')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size_mb'), eb.lit(0)).as('total'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export async function deleteVolumeRow(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('volumes').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertVolumeAttachment(db: Executor, attachment: VolumeAttachment): Promise<void> {
  await db
    .insertInto('volume_attachments')
    .values({
      volume_id: attachment.volumeId,
      vm_id: attachment.vmId,
      slot: attachment.slot,
      mount_path: attachment.mountPath,
      read_only: attachment.readOnly ? 1 : 0,
      created_at: attachment.createdAt,
    })
    .execute();
}

/** The attachments of `volumeIds` whose VM has not ended (starting, running or paused): the volumes in use. */
export async function openAttachments(db: Executor, volumeIds: readonly string[]): Promise<VolumeAttachment[]> {
  if (volumeIds.length === 0) return [];
  const rows = await db
    .selectFrom('volume_attachments')
    .innerJoin('vms', 'vms.id', 'volume_attachments.vm_id')
    .selectAll('volume_attachments')
    .where('volume_attachments.volume_id', 'in', [...volumeIds])
    .where('vms.status', '!=', 'killed')
    .orderBy('volume_attachments.created_at')
    .execute();
  return rows.map(toAttachment);
}

/** The volumes VM `vmId` mounted, in slot order (a paused VM's come back in the same slots). */
export async function vmAttachments(db: Executor, vmId: string): Promise<VolumeAttachment[]> {
  const rows = await db.selectFrom('volume_attachments').selectAll().where('vm_id', '=', vmId).orderBy('slot').execute();
  return rows.map(toAttachment);
}

/** A volume a session's VMs mount (`SessionVolumesTable`). */
export interface SessionVolume {
  volumeId: string;
  mountPath: string;
  readOnly: boolean;
}

/** The volumes each VM of the session mounts, in slot order. */
export async function findSessionVolumes(db: Executor, sessionId: string): Promise<SessionVolume[]> {
  const rows = await db.selectFrom('session_volumes').selectAll().where('session_id', '=', sessionId).orderBy('slot').execute();
  return rows.map((row) => ({ volumeId: row.volume_id, mountPath: row.mount_path, readOnly: row.read_only === 1 }));
}

/** Sets the volumes each next VM of the session mounts (slot `i` holding `volumes[i]`); empty: none. */
export async function replaceSessionVolumes(db: Executor, sessionId: string, volumes: readonly SessionVolume[]): Promise<void> {
  await db.deleteFrom('session_volumes').where('session_id', '=', sessionId).execute();
  if (volumes.length === 0) return;
  await db
    .insertInto('session_volumes')
    .values(
      volumes.map((volume, slot) => ({
        session_id: sessionId,
        volume_id: volume.volumeId,
        slot,
        mount_path: volume.mountPath,
        read_only: volume.readOnly ? 1 : 0,
      })),
    )
    .execute();
}
