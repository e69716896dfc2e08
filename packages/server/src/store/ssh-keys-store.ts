/**
 * Persistence of users' SSH public keys. Reads and writes a user triggers are scoped by `user_id`; the one
 * unscoped read (by fingerprint) serves the SSH gateway, which then keeps only the key of the VM's owner.
 */
import type { NewSshKeyRow, SshKeyRow } from './schema.ts';
import type { Executor } from './database.ts';

export async function insertSshKey(db: Executor, key: NewSshKeyRow): Promise<SshKeyRow> {
  return db.insertInto('ssh_keys').values(key).returningAll().executeTakeFirstOrThrow();
}

/** The user's keys, oldest first. */
export async function listSshKeys(db: Executor, userId: number): Promise<SshKeyRow[]> {
  return db.selectFrom('ssh_keys').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

export async function countSshKeys(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('ssh_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findSshKey(db: Executor, userId: number, id: number): Promise<SshKeyRow | undefined> {
  return db.selectFrom('ssh_keys').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** The user's key with this fingerprint (the gateway's lookup, and the duplicate check). */
export async function findSshKeyByFingerprint(db: Executor, userId: number, fingerprint: string): Promise<SshKeyRow | undefined> {
  return db.selectFrom('ssh_keys').selectAll().where('user_id', '=', userId).where('fingerprint', '=', fingerprint).executeTakeFirst();
}

/** Deletes one of the user's keys; the deleted row, or undefined when there is no such key. */
export async function deleteSshKey(db: Executor, userId: number, id: number): Promise<SshKeyRow | undefined> {
  return db.deleteFrom('ssh_keys').where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
}

export async function touchSshKey(db: Executor, id: number, at: string): Promise<void> {
  await db.updateTable('ssh_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
