/** What daily usage is summed from (core/usage.ts): one user's executions per day, and VMs in a time window. */
import { sql } from 'kysely';
import type { Executor } from './database.ts';

/**
 * The user's executions created at or after `sinceIso`, counted and their CPU time summed per UTC day (the
 * first ten characters of the ISO time, which SQLite and PostgreSQL both cut with substr): one row per day
 * with use, however many executions there were.
 */
export async function executionsPerDaySince(
  db: Executor,
  userId: number,
  sinceIso: string,
): Promise<{ day: string; executions: number; cpu_seconds: number }[]> {
  const rows = await db
    .selectFrom('executions')
    .select((eb) => [
      sql<string>`substr(created_at, 1, 10)`.as('day'),
      eb.fn.countAll<number | string>().as('executions'),
      eb.fn.sum<number | string | null>('cpu_time').as('cpu_seconds'),
    ])
    .where('user_id', '=', userId)
    .where('created_at', '>=', sinceIso)
    .groupBy(sql`substr(created_at, 1, 10)`)
    .execute();
  // PostgreSQL answers counts and sums as strings (bigint, numeric).
  return rows.map((row) => ({ day: row.day, executions: Number(row.executions), cpu_seconds: Number(row.cpu_seconds ?? 0) }));
}

/** The user's VMs that ran at some time after `sinceIso`: started, and not ended before it. */
export async function vmRunsSince(db: Executor, userId: number, sinceIso: string): Promise<{ started_at: string | null; ended_at: string | null }[]> {
  return db
    .selectFrom('vms')
    .select(['started_at', 'ended_at'])
    .where('user_id', '=', userId)
    .where('started_at', 'is not', null)
    .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>=', sinceIso)]))
    .execute();
}

/** Per UTC day since `sinceIso`: the user's egress log (connection attempts, refusals, bytes each way). */
export async function egressPerDaySince(
  db: Executor,
  userId: number,
  sinceIso: string,
): Promise<{ day: string; attempts: number; refused: number; bytes_sent: number; bytes_received: number }[]> {
  const rows = await db
    .selectFrom('egress_log')
    .select((eb) => [
      sql<string>`substr(at, 1, 10)`.as('day'),
      eb.fn.countAll<number | string>().as('attempts'),
      eb.fn.sum<number | string | null>(sql`case when verdict = 'refused' then 1 else 0 end`).as('refused'),
      eb.fn.sum<number | string | null>('bytes_sent').as('bytes_sent'),
      eb.fn.sum<number | string | null>('bytes_received').as('bytes_received'),
    ])
    .where('user_id', '=', userId)
    .where('at', '>=', sinceIso)
    .groupBy(sql`substr(at, 1, 10)`)
    .execute();
  return rows.map((row) => ({
    day: row.day,
    attempts: Number(row.attempts),
    refused: Number(row.refused ?? 0),
    bytes_sent: Number(row.bytes_sent ?? 0),
    bytes_received: Number(row.bytes_received ?? 0),
  }));
}

/** Per UTC day since `sinceIso`: the user's vault secrets swapped into requests, and placeholders flagged. */
export async function vaultUsePerDaySince(db: Executor, userId: number, sinceIso: string): Promise<{ day: string; substituted: number; flagged: number }[]> {
  const rows = await db
    .selectFrom('vault_request_logs')
    .select((eb) => [
      sql<string>`substr(at, 1, 10)`.as('day'),
      eb.fn.sum<number | string | null>(sql`case when outcome = 'substituted' then 1 else 0 end`).as('substituted'),
      eb.fn.sum<number | string | null>(sql`case when outcome = 'flagged' then 1 else 0 end`).as('flagged'),
    ])
    .where('user_id', '=', userId)
    .where('at', '>=', sinceIso)
    .groupBy(sql`substr(at, 1, 10)`)
    .execute();
  return rows.map((row) => ({ day: row.day, substituted: Number(row.substituted ?? 0), flagged: Number(row.flagged ?? 0) }));
}
