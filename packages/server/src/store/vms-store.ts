/** Persistence of VM records (the engine keeps the running processes; this is their history and state). */
import { LIVE_VM_STATUSES, type Vm, type VmStatus } from '../model.ts';
import { hooksFromColumn, hooksToColumn } from './lifecycle-hooks-column.ts';
import type { VmRow } from './schema.ts';
import type { Executor } from './database.ts';

/** What a state change of a VM may write. */
export type VmChanges = Partial<
  Pick<Vm, 'status' | 'endReason' | 'templateId' | 'ip' | 'startedAt' | 'expiresAt' | 'endedAt' | 'baseSnapshotId' | 'pausedAt' | 'remainingSeconds' | 'nodeId'>
>;

/** Every column of a VM row (a query that joins another table selects them under a prefix: `findSessionWithVm`). */
export const VM_COLUMNS = [
  'id',
  'user_id',
  'session_id',
  'node_id',
  'status',
  'end_reason',
  'vcpu_count',
  'memory_mb',
  'lifetime_seconds',
  'template_id',
  'ip',
  'created_at',
  'started_at',
  'expires_at',
  'ended_at',
  'name',
  'metadata',
  'base_snapshot_id',
  'paused_at',
  'remaining_seconds',
  'python_context',
  'lifecycle_hooks',
  'auto_pause_seconds',
  'on_expiry',
  'last_activity_at',
] as const satisfies readonly (keyof VmRow)[];

/** A compile error here names a column of `vms` that VM_COLUMNS is missing. */
export type VmColumnsCheck = Expect<Exclude<keyof VmRow, (typeof VM_COLUMNS)[number]>>;
type Expect<Missing extends never> = Missing;

export function toVm(row: VmRow): Vm {
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
    name: row.name,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    baseSnapshotId: row.base_snapshot_id,
    pausedAt: row.paused_at,
    remainingSeconds: row.remaining_seconds,
    pythonContext: row.python_context,
    lifecycleHooks: hooksFromColumn(row.lifecycle_hooks),
    autoPauseSeconds: row.auto_pause_seconds,
    onExpiry: row.on_expiry,
    lastActivityAt: row.last_activity_at,
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
      name: vm.name,
      metadata: JSON.stringify(vm.metadata),
      base_snapshot_id: vm.baseSnapshotId,
      paused_at: vm.pausedAt,
      remaining_seconds: vm.remainingSeconds,
      python_context: vm.pythonContext,
      lifecycle_hooks: hooksToColumn(vm.lifecycleHooks),
      auto_pause_seconds: vm.autoPauseSeconds,
      on_expiry: vm.onExpiry,
      last_activity_at: vm.lastActivityAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toVm(row);
}

export async function findVm(db: Executor, id: string): Promise<Vm | undefined> {
  const row = await db.selectFrom('vms').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toVm(row);
}

/** The VMs among `ids` that have a record, by id (one query, whatever the number of ids). */
export async function findVms(db: Executor, ids: readonly string[]): Promise<Map<string, Vm>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('vms').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, toVm(row)]));
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
      ...(changes.baseSnapshotId !== undefined ? { base_snapshot_id: changes.baseSnapshotId } : {}),
      ...(changes.pausedAt !== undefined ? { paused_at: changes.pausedAt } : {}),
      ...(changes.remainingSeconds !== undefined ? { remaining_seconds: changes.remainingSeconds } : {}),
      ...(changes.nodeId !== undefined ? { node_id: changes.nodeId } : {}),
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

/** Whether a VM that is not ended (live or paused) builds its disk on the snapshot (so it must be kept). */
export async function snapshotInUseByVm(db: Executor, snapshotId: string): Promise<Vm | undefined> {
  const row = await db.selectFrom('vms').selectAll().where('base_snapshot_id', '=', snapshotId).where('status', '!=', 'killed').executeTakeFirst();
  return row && toVm(row);
}

/** A VM that has not ended (starting, active or paused) and started from the template `templateId`. */
export async function templateInUseByVm(db: Executor, templateId: string): Promise<Vm | undefined> {
  const row = await db.selectFrom('vms').selectAll().where('template_id', '=', templateId).where('status', '!=', 'killed').executeTakeFirst();
  return row && toVm(row);
}

/** Live VMs recorded on nodes the cluster declared dead (they are lost: nothing runs them any more). */
export async function listLiveVmsOnDeadNodes(db: Executor): Promise<Vm[]> {
  const rows = await db
    .selectFrom('vms')
    .selectAll()
    .where('status', 'in', [...LIVE_VM_STATUSES])
    .where('node_id', 'in', (eb) => eb.selectFrom('cluster_nodes').select('id').where('state', '=', 'dead'))
    .execute();
  return rows.map(toVm);
}

/** Live VMs this node is responsible for (to reconcile with the engine after a restart). */
export async function listLiveVmsOfNode(db: Executor, nodeId: string): Promise<Vm[]> {
  const rows = await db
    .selectFrom('vms')
    .selectAll()
    .where('node_id', '=', nodeId)
    .where('status', 'in', [...LIVE_VM_STATUSES])
    .execute();
  return rows.map(toVm);
}

/** The VMs of `nodeId` that have not ended, counted by status and template (metrics). */
export async function countUnendedVmsOfNode(db: Executor, nodeId: string): Promise<{ status: VmStatus; template: string; count: number }[]> {
  const rows = await db
    .selectFrom('vms')
    .select((eb) => ['status', 'template_id', eb.fn.countAll<number>().as('count')])
    .where('node_id', '=', nodeId)
    .where('status', '!=', 'killed')
    .groupBy(['status', 'template_id'])
    .execute();
  return rows.map((row) => ({ status: row.status, template: row.template_id, count: Number(row.count) }));
}

/**
 * What each node (or only `nodeId`) runs now (live VMs: count, vCPUs, memory), from the VM rows: fresher than
 * any heartbeat. One aggregate query: placement reads every node's, a heartbeat its own.
 */
export async function liveLoadByNode(db: Executor, nodeId?: string): Promise<Map<string, { vms: number; vcpus: number; memoryMb: number }>> {
  let query = db
    .selectFrom('vms')
    .select((eb) => [
      'node_id',
      eb.fn.countAll<number>().as('vms'),
      eb.fn.coalesce(eb.fn.sum<number>('vcpu_count'), eb.lit(0)).as('vcpus'),
      eb.fn.coalesce(eb.fn.sum<number>('memory_mb'), eb.lit(0)).as('memory'),
    ])
    .where('status', 'in', [...LIVE_VM_STATUSES]);
  if (nodeId !== undefined) query = query.where('node_id', '=', nodeId);
  const rows = await query.groupBy('node_id').execute();
  return new Map(rows.map((row) => [row.node_id, { vms: Number(row.vms), vcpus: Number(row.vcpus), memoryMb: Number(row.memory) }]));
}

/**
 * Records that the VMs `ids` were used at `at` (an ISO time): a record that says later already is left alone, so
 * nodes flushing out of order never move a VM's last use back.
 */
export async function recordVmActivity(db: Executor, ids: readonly string[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('vms')
    .set({ last_activity_at: at })
    .where('id', 'in', [...ids])
    .where((eb) => eb.or([eb('last_activity_at', 'is', null), eb('last_activity_at', '<', at)]))
    .execute();
}

/** The running VMs of `nodeId` that may be paused for idleness or at the end of their lifetime (the auto-pause loop). */
export async function listAutoPauseCandidates(db: Executor, nodeId: string): Promise<Vm[]> {
  const rows = await db
    .selectFrom('vms')
    .selectAll()
    .where('node_id', '=', nodeId)
    .where('status', '=', 'active')
    .where('auto_pause_seconds', 'is not', null)
    .execute();
  return rows.map(toVm);
}

/**
 * Paused VMs paused before `pausedBefore` (ISO), each with its owner's plan, oldest first: those recorded on `nodeId`,
 * or every node's (null: their pauses are in the cluster's object store, which any node may discard).
 */
export async function listPausedVmsWithPlans(db: Executor, nodeId: string | null, pausedBefore: string, limit: number): Promise<{ vm: Vm; plan: string }[]> {
  let query = db.selectFrom('vms').innerJoin('users', 'users.id', 'vms.user_id').selectAll('vms').select('users.plan as owner_plan');
  if (nodeId !== null) query = query.where('vms.node_id', '=', nodeId);
  const rows = await query.where('vms.status', '=', 'paused').where('vms.paused_at', '<', pausedBefore).orderBy('vms.paused_at').limit(limit).execute();
  return rows.map((row) => ({ vm: toVm(row), plan: row.owner_plan }));
}
