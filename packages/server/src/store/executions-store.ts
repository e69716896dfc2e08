/** Persistence of execution (task) records. */
import { IN_FLIGHT_EXECUTION_STATUSES, type Execution, type ExecutionStatus } from '../model.ts';
import type { ExecutionRow } from './schema.ts';
import type { Executor } from './database.ts';

export type NewExecution = Omit<Execution, 'id'>;

/** What running and finishing an execution may write. */
export type ExecutionChanges = Partial<
  Omit<Execution, 'id' | 'userId' | 'sessionId' | 'nodeId' | 'mode' | 'trigger' | 'language' | 'source' | 'createdAt' | 'contextId'>
>;

function toExecution(row: ExecutionRow): Execution {
  return {
    id: row.id,
    userId: row.user_id,
    sessionId: row.session_id,
    vmId: row.vm_id,
    nodeId: row.node_id,
    mode: row.mode,
    trigger: row.triggered_by,
    language: row.language,
    source: row.source,
    status: row.status,
    exitCode: row.exit_code,
    error: row.error,
    stdout: row.stdout,
    stderr: row.stderr,
    stdoutTruncated: row.stdout_truncated === 1,
    stderrTruncated: row.stderr_truncated === 1,
    createdAt: row.created_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    executionTime: row.execution_time,
    cpuTime: row.cpu_time,
    results: row.results ? (JSON.parse(row.results) as Execution['results']) : [],
    exception: row.exception ? (JSON.parse(row.exception) as Execution['exception']) : null,
    contextId: row.python_context,
  };
}

/** Column values of the fields present in `changes`. */
function toColumns(changes: ExecutionChanges) {
  const columns: Partial<Omit<ExecutionRow, 'id'>> = {};
  if (changes.vmId !== undefined) columns.vm_id = changes.vmId;
  if (changes.status !== undefined) columns.status = changes.status;
  if (changes.exitCode !== undefined) columns.exit_code = changes.exitCode;
  if (changes.error !== undefined) columns.error = changes.error;
  if (changes.stdout !== undefined) columns.stdout = changes.stdout;
  if (changes.stderr !== undefined) columns.stderr = changes.stderr;
  if (changes.stdoutTruncated !== undefined) columns.stdout_truncated = changes.stdoutTruncated ? 1 : 0;
  if (changes.stderrTruncated !== undefined) columns.stderr_truncated = changes.stderrTruncated ? 1 : 0;
  if (changes.startedAt !== undefined) columns.started_at = changes.startedAt;
  if (changes.completedAt !== undefined) columns.completed_at = changes.completedAt;
  if (changes.executionTime !== undefined) columns.execution_time = changes.executionTime;
  if (changes.cpuTime !== undefined) columns.cpu_time = changes.cpuTime;
  if (changes.results !== undefined) columns.results = changes.results.length > 0 ? JSON.stringify(changes.results) : null;
  if (changes.exception !== undefined) columns.exception = changes.exception && JSON.stringify(changes.exception);
  return columns;
}

export async function insertExecution(db: Executor, execution: NewExecution): Promise<Execution> {
  const row = await db
    .insertInto('executions')
    .values({
      user_id: execution.userId,
      session_id: execution.sessionId,
      mode: execution.mode,
      triggered_by: execution.trigger,
      language: execution.language,
      source: execution.source,
      created_at: execution.createdAt,
      stdout: execution.stdout,
      stderr: execution.stderr,
      stdout_truncated: execution.stdoutTruncated ? 1 : 0,
      stderr_truncated: execution.stderrTruncated ? 1 : 0,
      vm_id: execution.vmId,
      node_id: execution.nodeId,
      status: execution.status,
      exit_code: execution.exitCode,
      error: execution.error,
      started_at: execution.startedAt,
      completed_at: execution.completedAt,
      execution_time: execution.executionTime,
      cpu_time: execution.cpuTime,
      results: execution.results.length > 0 ? JSON.stringify(execution.results) : null,
      exception: execution.exception && JSON.stringify(execution.exception),
      python_context: execution.contextId,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toExecution(row);
}

/** Updates an execution (only while its status is one of `fromStatuses`, when given); undefined when it was not. */
export async function updateExecution(
  db: Executor,
  id: number,
  changes: ExecutionChanges,
  fromStatuses?: readonly ExecutionStatus[],
): Promise<Execution | undefined> {
  let query = db.updateTable('executions').set(toColumns(changes)).where('id', '=', id);
  if (fromStatuses) query = query.where('status', 'in', [...fromStatuses]);
  const row = await query.returningAll().executeTakeFirst();
  return row && toExecution(row);
}

export async function findExecution(db: Executor, userId: number, id: number): Promise<Execution | undefined> {
  const row = await db.selectFrom('executions').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return row && toExecution(row);
}

/** The user's records, newest first, optionally of one session. */
export async function listExecutions(db: Executor, userId: number, limit: number, offset: number, sessionId?: string): Promise<Execution[]> {
  let query = db.selectFrom('executions').selectAll().where('user_id', '=', userId);
  if (sessionId) query = query.where('session_id', '=', sessionId);
  const rows = await query.orderBy('id', 'desc').limit(limit).offset(offset).execute();
  return rows.map(toExecution);
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

/**
 * Ends in-flight (queued or running) executions as failed with `error`: those of one VM, or all that one
 * node runs. Returns them as they are now.
 */
export async function failInFlightExecutions(db: Executor, of: { vmId: string } | { nodeId: string }, error: string, at: string): Promise<Execution[]> {
  const rows = await db
    .updateTable('executions')
    .set({ status: 'failed', error, completed_at: at })
    .where('vmId' in of ? 'vm_id' : 'node_id', '=', 'vmId' in of ? of.vmId : of.nodeId)
    .where('status', 'in', [...IN_FLIGHT_EXECUTION_STATUSES])
    .returningAll()
    .execute();
  return rows.map(toExecution);
}
