/** Persistence of shares (preview access for people other than the session's owner). */
import type { NewShareRow, ShareRow } from './schema.ts';
import type { Executor } from './users-store.ts';

export async function insertShare(db: Executor, row: NewShareRow): Promise<ShareRow> {
  return db.insertInto('shares').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findShare(db: Executor, id: string): Promise<ShareRow | undefined> {
  return db.selectFrom('shares').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The user's shares, newest first, optionally of one session. */
export async function listShares(db: Executor, userId: number, sessionId?: string): Promise<ShareRow[]> {
  let query = db.selectFrom('shares').selectAll().where('user_id', '=', userId);
  if (sessionId !== undefined) query = query.where('session_id', '=', sessionId);
  return query.orderBy('created_at', 'desc').orderBy('id').execute();
}

/** Public shares of one session port that have not expired at `now` (ISO time). */
export async function findPublicShares(db: Executor, sessionId: string, port: number, now: string): Promise<ShareRow[]> {
  return db
    .selectFrom('shares')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('port', '=', port)
    .where('is_public', '=', 1)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute();
}

export async function deleteShare(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('shares').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
