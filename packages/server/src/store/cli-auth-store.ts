/**
 * Persistence of command-line login requests. State changes are conditional updates on the expected
 * current status, so of two racing requests (two approvals, two exchanges) exactly one wins.
 */
import type { CliAuthStatus } from '../model.ts';
import type { CliAuthRequestRow, CliAuthRequestUpdate, NewCliAuthRequestRow } from './schema.ts';
import type { Executor } from './database.ts';

export async function insertCliAuthRequest(db: Executor, row: NewCliAuthRequestRow): Promise<CliAuthRequestRow> {
  return db.insertInto('cli_auth_requests').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findCliAuthByDeviceCodeHash(db: Executor, hash: string): Promise<CliAuthRequestRow | undefined> {
  return db.selectFrom('cli_auth_requests').selectAll().where('device_code_hash', '=', hash).executeTakeFirst();
}

export async function findCliAuthByUserCode(db: Executor, userCode: string): Promise<CliAuthRequestRow | undefined> {
  return db.selectFrom('cli_auth_requests').selectAll().where('user_code', '=', userCode).executeTakeFirst();
}

export async function findCliAuthById(db: Executor, id: number): Promise<CliAuthRequestRow | undefined> {
  return db.selectFrom('cli_auth_requests').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Applies `changes` only while the row is in `expectedStatus`; returns the new row, or undefined when it was not. */
export async function transitionCliAuth(
  db: Executor,
  id: number,
  expectedStatus: CliAuthStatus,
  changes: CliAuthRequestUpdate,
): Promise<CliAuthRequestRow | undefined> {
  return db.updateTable('cli_auth_requests').set(changes).where('id', '=', id).where('status', '=', expectedStatus).returningAll().executeTakeFirst();
}

export async function updateCliAuth(db: Executor, id: number, changes: CliAuthRequestUpdate): Promise<void> {
  await db.updateTable('cli_auth_requests').set(changes).where('id', '=', id).execute();
}

/** Removes requests that expired before `before` (they can no longer be approved or exchanged). */
export async function deleteCliAuthExpiredBefore(db: Executor, before: string): Promise<void> {
  await db.deleteFrom('cli_auth_requests').where('expires_at', '<', before).execute();
}
