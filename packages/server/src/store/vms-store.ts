/** Persistence of VM records (the engine keeps the running processes; this is their history and state). */
import type { Updateable } from 'kysely';
import type { VmRow, VmsTable } from './schema.ts';
import type { Executor } from './users-store.ts';

/** Statuses that hold resources (count against quotas). */
export const LIVE_VM_STATUSES = ['starting', 'active'] as const;

export async function insertVm(db: Executor, vm: VmRow): Promise<VmRow> {
  return db.insertInto('vms').values(vm).returningAll().executeTakeFirstOrThrow();
}

export async function findVm(db: Executor, id: string): Promise<VmRow | undefined> {
  return db.selectFrom('vms').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Updates a VM only while it is in one of `fromStatuses`; returns the new row, or undefined if it was not. */
export async function transitionVm(
  db: Executor,
  id: string,
  fromStatuses: readonly string[],
  changes: Updateable<VmsTable>,
): Promise<VmRow | undefined> {
  return db.updateTable('vms').set(changes).where('id', '=', id).where('status', 'in', [...fromStatuses]).returningAll().executeTakeFirst();
}

/** The user's VMs, newest first. */
export async function listVms(db: Executor, userId: number, limit: number, options: { status?: string; beforeCreatedAt?: string } = {}): Promise<VmRow[]> {
  let query = db.selectFrom('vms').selectAll().where('user_id', '=', userId);
  if (options.status) query = query.where('status', '=', options.status);
  if (options.beforeCreatedAt) query = query.where('created_at', '<', options.beforeCreatedAt);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** How many VMs and vCPUs a user holds right now (for quotas). */
export async function countLiveVms(db: Executor, userId: number): Promise<{ vms: number; vcpus: number }> {
  const row = await db
    .selectFrom('vms')
    .select((eb) => [eb.fn.countAll<number>().as('vms'), eb.fn.coalesce(eb.fn.sum<number>('vcpu_count'), eb.lit(0)).as('vcpus')])
    .where('user_id', '=', userId)
    .where('status', 'in', [...LIVE_VM_STATUSES])
    .executeTakeFirstOrThrow();
  return { vms: Number(row.vms), vcpus: Number(row.vcpus) };
}

/** Live VMs this node is responsible for (to reconcile with the engine after a restart). */
export async function listLiveVmsOfNode(db: Executor, nodeId: string): Promise<VmRow[]> {
  return db.selectFrom('vms').selectAll().where('node_id', '=', nodeId).where('status', 'in', [...LIVE_VM_STATUSES]).execute();
}
