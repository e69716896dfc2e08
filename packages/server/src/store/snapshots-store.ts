/** Persistence of the snapshots users take of their VMs. Byte counts are bigint columns (strings on PostgreSQL). */
import type { Snapshot } from '../model.ts';
import type { SnapshotRow } from './schema.ts';
import type { Executor } from './database.ts';

function toSnapshot(row: SnapshotRow): Snapshot {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    status: row.status,
    sourceVmId: row.source_vm_id,
    parentId: row.parent_id,
    templateId: row.template_id,
    nodeId: row.node_id,
    vcpuCount: row.vcpu_count,
    memoryMb: row.memory_mb,
    diskSizeMb: row.disk_size_mb,
    memoryBytes: Number(row.memory_bytes),
    diskBytes: Number(row.disk_bytes),
    stateBytes: Number(row.state_bytes),
    pauseMs: row.pause_ms,
    durationMs: row.duration_ms,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    pythonContext: row.python_context,
    createdAt: row.created_at,
  };
}

export async function insertSnapshot(db: Executor, snapshot: Snapshot): Promise<Snapshot> {
  const row = await db
    .insertInto('snapshots')
    .values({
      id: snapshot.id,
      user_id: snapshot.userId,
      name: snapshot.name,
      status: snapshot.status,
      source_vm_id: snapshot.sourceVmId,
      parent_id: snapshot.parentId,
      template_id: snapshot.templateId,
      node_id: snapshot.nodeId,
      vcpu_count: snapshot.vcpuCount,
      memory_mb: snapshot.memoryMb,
      disk_size_mb: snapshot.diskSizeMb,
      memory_bytes: snapshot.memoryBytes,
      disk_bytes: snapshot.diskBytes,
      state_bytes: snapshot.stateBytes,
      pause_ms: Math.round(snapshot.pauseMs),
      duration_ms: Math.round(snapshot.durationMs),
      metadata: JSON.stringify(snapshot.metadata),
      python_context: snapshot.pythonContext,
      created_at: snapshot.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toSnapshot(row);
}

export async function findSnapshot(db: Executor, id: string): Promise<Snapshot | undefined> {
  const row = await db.selectFrom('snapshots').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toSnapshot(row);
}

export async function findSnapshotByName(db: Executor, userId: number, name: string): Promise<Snapshot | undefined> {
  const row = await db.selectFrom('snapshots').selectAll().where('user_id', '=', userId).where('name', '=', name).executeTakeFirst();
  return row && toSnapshot(row);
}

/** The user's snapshots, newest first. */
export async function listSnapshots(db: Executor, userId: number, limit: number, offset: number): Promise<Snapshot[]> {
  const rows = await db
    .selectFrom('snapshots')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toSnapshot);
}

/**
 * The user's snapshots newest first (ties by id) after `after`, optionally only those of VMs of the session
 * `sessionId` and the one named `name`. Scoped by `user_id` in the query itself.
 */
export async function listSnapshotsFiltered(
  db: Executor,
  userId: number,
  options: { sessionId?: string; name?: string; after?: { createdAt: string; id: string }; limit: number },
): Promise<Snapshot[]> {
  let query = db.selectFrom('snapshots').selectAll('snapshots').where('snapshots.user_id', '=', userId);
  const { sessionId, name, after } = options;
  if (sessionId !== undefined) {
    query = query.where('snapshots.source_vm_id', 'in', (eb) =>
      eb.selectFrom('vms').select('vms.id').where('vms.session_id', '=', sessionId).where('vms.user_id', '=', userId),
    );
  }
  if (name !== undefined) query = query.where('snapshots.name', '=', name);
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('snapshots.created_at', '<', after.createdAt), eb.and([eb('snapshots.created_at', '=', after.createdAt), eb('snapshots.id', '<', after.id)])]),
    );
  }
  const rows = await query.orderBy('snapshots.created_at', 'desc').orderBy('snapshots.id', 'desc').limit(options.limit).execute();
  return rows.map(toSnapshot);
}

/** A snapshot whose disk layer builds on `id`, if any (then `id` must be kept). */
export async function findChildSnapshot(db: Executor, id: string): Promise<Snapshot | undefined> {
  const row = await db.selectFrom('snapshots').selectAll().where('parent_id', '=', id).executeTakeFirst();
  return row && toSnapshot(row);
}

/** A snapshot whose chain starts from the template `templateId` (its disk layers build on the template's). */
export async function findSnapshotOfTemplate(db: Executor, templateId: string): Promise<Snapshot | undefined> {
  const row = await db.selectFrom('snapshots').selectAll().where('template_id', '=', templateId).executeTakeFirst();
  return row && toSnapshot(row);
}

/** What a finished capture fills in (sizes and times), turning a `creating` snapshot `ready`. */
export type SnapshotCompletion = Pick<
  Snapshot,
  'diskSizeMb' | 'memoryBytes' | 'diskBytes' | 'stateBytes' | 'pauseMs' | 'durationMs' | 'vcpuCount' | 'memoryMb'
>;

export async function completeSnapshot(db: Executor, id: string, done: SnapshotCompletion): Promise<Snapshot | undefined> {
  const row = await db
    .updateTable('snapshots')
    .set({
      status: 'ready',
      vcpu_count: done.vcpuCount,
      memory_mb: done.memoryMb,
      disk_size_mb: done.diskSizeMb,
      memory_bytes: done.memoryBytes,
      disk_bytes: done.diskBytes,
      state_bytes: done.stateBytes,
      pause_ms: Math.round(done.pauseMs),
      duration_ms: Math.round(done.durationMs),
    })
    .where('id', '=', id)
    .where('status', '=', 'creating')
    .returningAll()
    .executeTakeFirst();
  return row && toSnapshot(row);
}

/** Snapshots a node was still capturing when its process ended (nothing completes them now). */
export async function listCreatingSnapshotsOfNode(db: Executor, nodeId: string): Promise<Snapshot[]> {
  const rows = await db.selectFrom('snapshots').selectAll().where('node_id', '=', nodeId).where('status', '=', 'creating').execute();
  return rows.map(toSnapshot);
}

export async function deleteSnapshotRow(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('snapshots').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
