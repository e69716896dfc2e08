import type { Executor } from './database.ts';
/** Persistence of sign-in failures (migration 0019), counted per username and per source in a sliding window. */

export type FailureSubject = { username: string } | { source: string };

export async function insertSignInFailure(db: Executor, row: { username: string | null; source: string | null; at: string }): Promise<number> {
  const inserted = await db.insertInto('sign_in_failures').values(row).returning('id').executeTakeFirstOrThrow();
  return inserted.id;
}

export async function deleteSignInFailure(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('id', '=', id).execute();
}

/** The times of the subject's failures since `since`, newest first, at most `limit`. */
export async function recentSignInFailures(db: Executor, subject: FailureSubject, since: string, limit: number): Promise<string[]> {
  let query = db.selectFrom('sign_in_failures').select('at').where('at', '>', since);
  query = 'username' in subject ? query.where('username', '=', subject.username) : query.where('source', '=', subject.source);
  const rows = await query.orderBy('at', 'desc').limit(limit).execute();
  return rows.map((row) => row.at);
}

/** Forgets a username's failures (after it signed in). */
export async function clearSignInFailuresOf(db: Executor, username: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('username', '=', username).execute();
}

/** Forgets failures older than `before` (they no longer count). */
export async function deleteSignInFailuresBefore(db: Executor, before: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('at', '<=', before).execute();
}
