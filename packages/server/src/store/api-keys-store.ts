/**
 * Persistence of API keys. Every read and write that a user triggers is scoped by `user_id`, so one
 * user's key ids never reach another's.
 */
import type { ApiKeyRow, ApiKeyUpdate, NewApiKeyRow } from './schema.ts';
import type { Executor } from './database.ts';

export async function insertApiKey(db: Executor, key: NewApiKeyRow): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(key).returningAll().executeTakeFirstOrThrow();
}

/** The user's keys that are not deleted, oldest first. */
export async function listApiKeys(db: Executor, userId: number): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('user_id', '=', userId).where('status', '!=', 'deleted').orderBy('id').execute();
}

/** One of the user's keys that is not deleted. */
export async function findApiKey(db: Executor, userId: number, id: number): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).where('user_id', '=', userId).where('status', '!=', 'deleted').executeTakeFirst();
}

/** The key with this hash, whatever its state; the caller decides whether it may authenticate. */
export async function findApiKeyByHash(db: Executor, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

/** Updates one of the user's live keys; returns the new row, or undefined when there is no such key. */
export async function updateApiKey(db: Executor, userId: number, id: number, changes: ApiKeyUpdate): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set(changes)
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('status', '!=', 'deleted')
    .returningAll()
    .executeTakeFirst();
}

/** Marks a key used; called at most once a minute per key so reads stay cheap. */
export async function touchApiKey(db: Executor, id: number, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
