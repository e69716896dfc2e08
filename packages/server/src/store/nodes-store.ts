/**
 * Persistence of cluster nodes (see migration 0012). Every write is a single conditional statement, so nodes
 * racing on the same row (two reapers declaring one node dead, a heartbeat against a reaper) settle in the
 * database: exactly one wins, and the winner learns it from the affected rows.
 */
import type { ClusterNodeRow } from './schema.ts';
import type { Executor } from './database.ts';

export type { ClusterNodeRow };

/** Registers a node, or re-registers it (a restart, or a node that came back after being declared dead). */
export async function upsertNode(db: Executor, row: ClusterNodeRow): Promise<void> {
  // A re-registration keeps the operator's drain: a drained node stays drained across its restarts.
  const { internal_url, state, vcpus, memory_mb, vm_slots, templates, running_vms, used_vcpus, used_memory_mb, version, started_at, heartbeat_at, dead_at } =
    row;
  await db
    .insertInto('cluster_nodes')
    .values(row)
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({
        internal_url,
        state,
        vcpus,
        memory_mb,
        vm_slots,
        templates,
        running_vms,
        used_vcpus,
        used_memory_mb,
        version,
        started_at,
        heartbeat_at,
        dead_at,
      }),
    )
    .execute();
}

export interface NodeLoadUpdate {
  running_vms: number;
  used_vcpus: number;
  used_memory_mb: number;
  templates: string;
}

/** Records a heartbeat and the node's load; false when the node is no longer live (declared dead meanwhile). */
export async function heartbeatNode(db: Executor, id: string, now: string, load: NodeLoadUpdate): Promise<boolean> {
  const result = await db
    .updateTable('cluster_nodes')
    .set({ ...load, heartbeat_at: now })
    .where('id', '=', id)
    .where('state', '=', 'live')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Declares dead every live node whose last heartbeat is older than `cutoff`; returns those this call declared. */
export async function declareDeadNodes(db: Executor, cutoff: string, now: string): Promise<string[]> {
  const rows = await db
    .updateTable('cluster_nodes')
    .set({ state: 'dead', dead_at: now })
    .where('state', '=', 'live')
    .where('heartbeat_at', '<', cutoff)
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** A node that shut down cleanly: no longer placed on, not "dead" either. */
export async function markNodeLeft(db: Executor, id: string, now: string): Promise<void> {
  await db.updateTable('cluster_nodes').set({ state: 'left', heartbeat_at: now }).where('id', '=', id).execute();
}

export async function findNode(db: Executor, id: string): Promise<ClusterNodeRow | undefined> {
  return db.selectFrom('cluster_nodes').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listNodes(db: Executor): Promise<ClusterNodeRow[]> {
  return db.selectFrom('cluster_nodes').selectAll().orderBy('id').execute();
}

export async function updateNodeDrain(
  db: Executor,
  id: string,
  changes: Partial<Pick<ClusterNodeRow, 'drained' | 'deployment_drain'>>,
): Promise<ClusterNodeRow | undefined> {
  await db.updateTable('cluster_nodes').set(changes).where('id', '=', id).execute();
  return findNode(db, id);
}
