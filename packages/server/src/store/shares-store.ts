/** Persistence of shares (preview access for people other than the session's owner). */
import type { Share } from '../model.ts';
import type { ShareRow } from './schema.ts';
import type { Executor } from './database.ts';

function toShare(row: ShareRow): Share {
  return {
    id: row.id,
    userId: row.user_id,
    sessionId: row.session_id,
    port: row.port,
    isPublic: row.is_public === 1,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

export async function insertShare(db: Executor, share: Share): Promise<Share> {
  const row = await db
    .insertInto('shares')
    .values({
      id: share.id,
      user_id: share.userId,
      session_id: share.sessionId,
      port: share.port,
      is_public: share.isPublic ? 1 : 0,
      created_at: share.createdAt,
      expires_at: share.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toShare(row);
}

export async function findShare(db: Executor, id: string): Promise<Share | undefined> {
  const row = await db.selectFrom('shares').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toShare(row);
}

/** The user's shares, newest first, optionally of one session. */
export async function listShares(db: Executor, userId: number, sessionId?: string): Promise<Share[]> {
  let query = db.selectFrom('shares').selectAll().where('user_id', '=', userId);
  if (sessionId !== undefined) query = query.where('session_id', '=', sessionId);
  return (await query.orderBy('created_at', 'desc').orderBy('id').execute()).map(toShare);
}

/** Public shares of one session port that have not expired at `now` (ISO time). */
export async function findPublicShares(db: Executor, sessionId: string, port: number, now: string): Promise<Share[]> {
  const rows = await db
    .selectFrom('shares')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('port', '=', port)
    .where('is_public', '=', 1)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute();
  return rows.map(toShare);
}

export async function deleteShare(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('shares').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
