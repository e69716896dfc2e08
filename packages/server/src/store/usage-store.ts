/** The rows daily usage is summed from (core/usage.ts): one user's executions and VMs in a time window. */
import type { Executor } from './users-store.ts';

/** The user's executions created at or after `sinceIso`, oldest first: when, run time and CPU time. */
export async function executionTimesSince(db: Executor, userId: number, sinceIso: string): Promise<{ created_at: string; cpu_time: number | null }[]> {
  return db.selectFrom('executions').select(['created_at', 'cpu_time']).where('user_id', '=', userId).where('created_at', '>=', sinceIso).orderBy('created_at').execute();
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
