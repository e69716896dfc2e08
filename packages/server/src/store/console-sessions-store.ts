/** Persistence of web console sessions (migration 0019). A session is found by its token's hash only. */
import type { ConsoleSessionRow } from './schema.ts';
import type { Executor } from './database.ts';

export async function insertConsoleSession(db: Executor, row: ConsoleSessionRow): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/**
 * The live session with this token hash (not revoked, not expired at `now`), with the state of the API key it
 * was started with: the caller refuses a session whose key is gone or expired.
 */
export async function findLiveConsoleSession(
  db: Executor,
  tokenHash: string,
  now: string,
): Promise<(ConsoleSessionRow & { key_status: string | null; key_expires_at: string | null }) | undefined> {
  return db
    .selectFrom('console_sessions')
    .leftJoin('api_keys', 'api_keys.id', 'console_sessions.api_key_id')
    .selectAll('console_sessions')
    .select(['api_keys.status as key_status', 'api_keys.expires_at as key_expires_at'])
    .where('console_sessions.token_hash', '=', tokenHash)
    .where('console_sessions.revoked_at', 'is', null)
    .where('console_sessions.expires_at', '>', now)
    .executeTakeFirst();
}

/** Revokes the session with this token hash; true when a live one was revoked. */
export async function revokeConsoleSessionByHash(db: Executor, tokenHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('console_sessions')
    .set({ revoked_at: now })
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Revokes every live session started with the API key; answers how many. */
export async function revokeConsoleSessionsOfApiKey(db: Executor, apiKeyId: number, now: string): Promise<number> {
  const result = await db
    .updateTable('console_sessions')
    .set({ revoked_at: now })
    .where('api_key_id', '=', apiKeyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Forgets sessions that ended (expired, or revoked) before `before`. */
export async function deleteEndedConsoleSessions(db: Executor, before: string): Promise<void> {
  await db
    .deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', before), eb('revoked_at', '<=', before)]))
    .execute();
}
