/** Persistence of VM records (the engine keeps the running processes; this is their history and state). */
import { LIVE_VM_STATUSES, type Vm, type VmStatus } from '../core/model.ts';
import type { VmRow } from './schema.ts';
import type { Executor } from './users-store.ts';

/** What a state change of a VM may write. */
export type VmChanges = Partial<Pick<Vm, 'status' | 'endReason' | 'templateId' | 'ip' | 'startedAt' | 'expiresAt' | 'endedAt'>>;

function toVm(row: VmRow): Vm {
  return {
    id: row.id,
    userId: row.user_id,
    sessionId: row.session_id,
    nodeId: row.node_id,
    status: row.status,
    endReason: row.end_reason,
    vcpuCount: row.vcpu_count,
    memoryMb: row.memory_mb,
    lifetimeSeconds: row.lifetime_seconds,
    templateId: row.template_id,
    ip: row.ip,
    createdAt: row.created_at,
    startedAt: row.started_at,
    expiresAt: row.expires_at,
    endedAt: row.ended_at,
  };
}

export async function insertVm(db: Executor, vm: Vm): Promise<Vm> {
  const row = await db
    .insertInto('vms')
    .values({
      id: vm.id,
      user_id: vm.userId,
      session_id: vm.sessionId,
      node_id: vm.nodeId,
      status: vm.status,
      end_reason: vm.endReason,
      vcpu_count: vm.vcpuCount,
      memory_mb: vm.memoryMb,
      lifetime_seconds: vm.lifetimeSeconds,
      template_id: vm.templateId,
      ip: vm.ip,
      created_at: vm.createdAt,
      started_at: vm.startedAt,
      expires_at: vm.expiresAt,
      ended_at: vm.endedAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toVm(row);
}

export async function findVm(db: Executor, id: string): Promise<Vm | undefined> {
  const row = await db.selectFrom('vms').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toVm(row);
}

/** Updates a VM only while it is in one of `fromStatuses`; returns the new record, or undefined if it was not. */
export async function transitionVm(db: Executor, id: string, fromStatuses: readonly VmStatus[], changes: VmChanges): Promise<Vm | undefined> {
  const row = await db
    .updateTable('vms')
    .set({
      ...(changes.status !== undefined ? { status: changes.status } : {}),
      ...(changes.endReason !== undefined ? { end_reason: changes.endReason } : {}),
      ...(changes.templateId !== undefined ? { template_id: changes.templateId } : {}),
      ...(changes.ip !== undefined ? { ip: changes.ip } : {}),
      ...(changes.startedAt !== undefined ? { started_at: changes.startedAt } : {}),
      ...(changes.expiresAt !== undefined ? { expires_at: changes.expiresAt } : {}),
      ...(changes.endedAt !== undefined ? { ended_at: changes.endedAt } : {}),
    })
    .where('id', '=', id)
    .where('status', 'in', [...fromStatuses])
    .returningAll()
    .executeTakeFirst();
  return row && toVm(row);
}

/** The user's VMs, newest first. */
export async function listVms(db: Executor, userId: number, limit: number, options: { status?: VmStatus; beforeCreatedAt?: string } = {}): Promise<Vm[]> {
  let query = db.selectFrom('vms').selectAll().where('user_id', '=', userId);
  if (options.status) query = query.where('status', '=', options.status);
  if (options.beforeCreatedAt) query = query.where('created_at', '<', options.beforeCreatedAt);
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toVm);
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
export async function listLiveVmsOfNode(db: Executor, nodeId: string): Promise<Vm[]> {
  const rows = await db.selectFrom('vms').selectAll().where('node_id', '=', nodeId).where('status', 'in', [...LIVE_VM_STATUSES]).execute();
  return rows.map(toVm);
}
