/** Persistence of sessions. Reads a user triggers are scoped by `user_id`. metadata and env are JSON text. */
import type { Session } from '../core/model.ts';
import { hooksFromColumn, hooksToColumn } from './lifecycle-hooks-column.ts';
import type { SessionRow } from './schema.ts';
import type { Executor } from './users-store.ts';

/** What may change on a session after it is created. */
export type SessionChanges = Partial<Pick<Session, 'currentVmId' | 'lastActivityAt' | 'env'>>;

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
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toSession(row);
}

export async function findSession(db: Executor, id: string): Promise<Session | undefined> {
  const row = await db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toSession(row);
}

export async function updateSession(db: Executor, id: string, changes: SessionChanges): Promise<void> {
  await db
    .updateTable('sessions')
    .set({
      ...(changes.currentVmId !== undefined ? { current_vm_id: changes.currentVmId } : {}),
      ...(changes.lastActivityAt !== undefined ? { last_activity_at: changes.lastActivityAt } : {}),
      ...(changes.env !== undefined ? { env: JSON.stringify(changes.env) } : {}),
    })
    .where('id', '=', id)
    .execute();
}
