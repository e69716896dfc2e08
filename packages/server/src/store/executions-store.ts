/** Persistence of execution (task) records. */
import type { Insertable, Updateable } from 'kysely';
import type { ExecutionRow, ExecutionsTable } from './schema.ts';
import type { Executor } from './users-store.ts';

export async function insertExecution(db: Executor, execution: Insertable<ExecutionsTable>): Promise<ExecutionRow> {
  return db.insertInto('executions').values(execution).returningAll().executeTakeFirstOrThrow();
}

export async function updateExecution(db: Executor, id: number, changes: Updateable<ExecutionsTable>): Promise<ExecutionRow | undefined> {
  return db.updateTable('executions').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function findExecution(db: Executor, userId: number, id: number): Promise<ExecutionRow | undefined> {
  return db.selectFrom('executions').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** The user's records, newest first, optionally of one session. */
export async function listExecutions(db: Executor, userId: number, limit: number, offset: number, sessionId?: string): Promise<ExecutionRow[]> {
  let query = db.selectFrom('executions').selectAll().where('user_id', '=', userId);
  if (sessionId) query = query.where('session_id', '=', sessionId);
  return query.orderBy('id', 'desc').limit(limit).offset(offset).execute();
}

/** Executions the user started since `sinceIso`, and the oldest of them (for the per-minute rate limit). */
export async function countExecutionsSince(db: Executor, userId: number, sinceIso: string): Promise<{ count: number; oldest: string | null }> {
  const row = await db
    .selectFrom('executions')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min<string>('created_at').as('oldest')])
    .where('user_id', '=', userId)
    .where('created_at', '>', sinceIso)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), oldest: row.oldest ?? null };
}

/** Aggregates of one session's executions (usage endpoint). */
export async function sumSessionExecutions(db: Executor, sessionId: string): Promise<{ count: number; cpuSeconds: number; executionSeconds: number }> {
  const row = await db
    .selectFrom('executions')
    .select((eb) => [
      eb.fn.countAll<number>().as('count'),
      eb.fn.coalesce(eb.fn.sum<number>('cpu_time'), eb.lit(0)).as('cpu'),
      eb.fn.coalesce(eb.fn.sum<number>('execution_time'), eb.lit(0)).as('wall'),
    ])
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), cpuSeconds: Number(row.cpu), executionSeconds: Number(row.wall) };
}

/** Records left running by a server that stopped (their output will never come). */
export async function failInterruptedExecutions(db: Executor, vmIds: string[], at: string): Promise<number> {
  if (vmIds.length === 0) return 0;
  const result = await db
    .updateTable('executions')
    .set({ status: 'failed', error: 'the VM ended before the execution finished', completed_at: at })
    .where('vm_id', 'in', vmIds)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
