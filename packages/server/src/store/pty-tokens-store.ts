/** Single-use terminal attach tokens (by hash). Redeeming is one DELETE … RETURNING: two nodes cannot both spend one. */
import type { PtyAttachTokenRow } from './schema.ts';
import type { Executor } from './database.ts';

export async function insertAttachToken(db: Executor, row: PtyAttachTokenRow): Promise<void> {
  await db.insertInto('pty_attach_tokens').values(row).execute();
}

/** Deletes the token and answers what it granted (undefined: unknown or already spent). */
export async function takeAttachToken(db: Executor, tokenHash: string): Promise<PtyAttachTokenRow | undefined> {
  return db.deleteFrom('pty_attach_tokens').where('token_hash', '=', tokenHash).returningAll().executeTakeFirst();
}

export async function deleteExpiredAttachTokens(db: Executor, now: string): Promise<void> {
  await db.deleteFrom('pty_attach_tokens').where('expires_at', '<=', now).execute();
}
