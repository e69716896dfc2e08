/** Persistence of sessions. Reads a user triggers are scoped by `user_id`. metadata and env are JSON text. */
import type { Session, Vm, VmStatus } from '../model.ts';
import { hooksFromColumn, hooksToColumn } from './lifecycle-hooks-column.ts';
import type { SessionRow, VmRow } from './schema.ts';
import { toVm, VM_COLUMNS } from './vms-store.ts';
import type { Executor } from './database.ts';

/** What may change on a session after it is created. */
export type SessionChanges = Partial<Pick<Session, 'currentVmId' | 'lastActivityAt' | 'env' | 'autoPauseSeconds' | 'onExpiry'>>;

function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    userId: row.user_id,
    vmLifetimeSeconds: row.vm_lifetime_seconds,
    memoryMb: row.memory_mb,
    vcpuCount: row.vcpu_count,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    env: JSON.parse(row.env) as Record<string, string>,
    prewarm: row.prewarm === 1,
    currentVmId: row.current_vm_id,
    createdAt: row.created_at,
    lastActivityAt: row.last_activity_at,
    source: { kind: row.source_kind, id: row.source_id },
    screen: row.screen_width !== null && row.screen_height !== null ? { width: row.screen_width, height: row.screen_height } : null,
    lifecycleHooks: hooksFromColumn(row.lifecycle_hooks),
    clientData: row.client_data === null ? null : (JSON.parse(row.client_data) as Record<string, unknown>),
    autoPauseSeconds: row.auto_pause_seconds,
    onExpiry: row.on_expiry,
  };
}

export async function insertSession(db: Executor, session: Session): Promise<Session> {
  const row = await db
    .insertInto('sessions')
    .values({
      id: session.id,
      user_id: session.userId,
      vm_lifetime_seconds: session.vmLifetimeSeconds,
      memory_mb: session.memoryMb,
      vcpu_count: session.vcpuCount,
      metadata: JSON.stringify(session.metadata),
      env: JSON.stringify(session.env),
      prewarm: session.prewarm ? 1 : 0,
      current_vm_id: session.currentVmId,
      created_at: session.createdAt,
      last_activity_at: session.lastActivityAt,
      source_kind: session.source.kind,
      source_id: session.source.id,
      screen_width: session.screen?.width ?? null,
      screen_height: session.screen?.height ?? null,
      lifecycle_hooks: hooksToColumn(session.lifecycleHooks),
      client_data: session.clientData === null ? null : JSON.stringify(session.clientData),
      auto_pause_seconds: session.autoPauseSeconds,
      on_expiry: session.onExpiry,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toSession(row);
}

export async function findSession(db: Executor, id: string): Promise<Session | undefined> {
  const row = await db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toSession(row);
}

/**
 * A session and its current VM in one query: what a request on a session reads before it decides anything about
 * the VM (core/vms/resolve.ts). The VM's columns come under the prefix `vm__`, which no column of `sessions` has
 * (`vm_` alone would collide: sessions have `vm_lifetime_seconds`).
 */
export async function findSessionWithVm(db: Executor, id: string): Promise<{ session: Session; vm: Vm | undefined } | undefined> {
  const row = await db
    .selectFrom('sessions')
    .leftJoin('vms', 'vms.id', 'sessions.current_vm_id')
    .selectAll('sessions')
    .select(VM_COLUMNS.map((column) => `vms.${column} as vm__${column}` as const))
    .where('sessions.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const record = row as unknown as Record<string, unknown>;
  const vm = record.vm__id === null ? undefined : toVm(Object.fromEntries(VM_COLUMNS.map((column) => [column, record[`vm__${column}`]])) as VmRow);
  return { session: toSession(row), vm };
}

/** Where a page of `listSessionsWithVm` starts: strictly after this session in its newest-first order. */
export interface SessionPosition {
  createdAt: string;
  id: string;
}

/**
 * A user's sessions whose current VM is in one of `vmStatuses`, each with that VM, newest session first (ties by
 * id), starting after `after`. Scoped by `user_id` in the query itself.
 */
export async function listSessionsWithVm(
  db: Executor,
  userId: number,
  options: { vmStatuses: readonly VmStatus[]; after?: SessionPosition; limit: number },
): Promise<{ session: Session; vm: Vm }[]> {
  if (options.vmStatuses.length === 0) return [];
  let query = db
    .selectFrom('sessions')
    .innerJoin('vms', 'vms.id', 'sessions.current_vm_id')
    .selectAll('sessions')
    .select(VM_COLUMNS.map((column) => `vms.${column} as vm__${column}` as const))
    .where('sessions.user_id', '=', userId)
    .where('vms.status', 'in', [...options.vmStatuses]);
  const after = options.after;
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('sessions.created_at', '<', after.createdAt), eb.and([eb('sessions.created_at', '=', after.createdAt), eb('sessions.id', '<', after.id)])]),
    );
  }
  const rows = await query.orderBy('sessions.created_at', 'desc').orderBy('sessions.id', 'desc').limit(options.limit).execute();
  return rows.map((row) => {
    const record = row as unknown as Record<string, unknown>;
    const vm = toVm(Object.fromEntries(VM_COLUMNS.map((column) => [column, record[`vm__${column}`]])) as VmRow);
    return { session: toSession(row), vm };
  });
}

export async function updateSession(db: Executor, id: string, changes: SessionChanges): Promise<void> {
  await db
    .updateTable('sessions')
    .set({
      ...(changes.currentVmId !== undefined ? { current_vm_id: changes.currentVmId } : {}),
      ...(changes.lastActivityAt !== undefined ? { last_activity_at: changes.lastActivityAt } : {}),
      ...(changes.env !== undefined ? { env: JSON.stringify(changes.env) } : {}),
      ...(changes.autoPauseSeconds !== undefined ? { auto_pause_seconds: changes.autoPauseSeconds } : {}),
      ...(changes.onExpiry !== undefined ? { on_expiry: changes.onExpiry } : {}),
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Deletes the sessions `ids` with the rows of their VMs, when every VM of theirs has ended (a fork that failed
 * leaves nothing of its clones: core/snapshots.ts). A session with a VM that has not ended is kept, with its VMs.
 * Answers how many sessions went.
 */
export async function deleteSessionsWithEndedVms(db: Executor, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const busy = await db.selectFrom('vms').select('session_id').distinct().where('session_id', 'in', ids).where('status', '!=', 'killed').execute();
  const kept = new Set(busy.map((row) => row.session_id));
  const gone = ids.filter((id) => !kept.has(id));
  if (gone.length === 0) return 0;
  await db.deleteFrom('vms').where('session_id', 'in', gone).execute();
  const deleted = await db.deleteFrom('sessions').where('id', 'in', gone).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
