/** Persistence of users. Functions take any executor (the database or a transaction). */
import type { Kysely } from 'kysely';
import type { NewUserRow, Tables, UserRow } from './schema.ts';

export type Executor = Kysely<Tables>;

/** Inserts a user; throws the driver's unique-violation error when the username is taken. */
export async function insertUser(db: Executor, user: NewUserRow): Promise<UserRow> {
  return db.insertInto('users').values(user).returningAll().executeTakeFirstOrThrow();
}

export async function findUserById(db: Executor, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByUsername(db: Executor, username: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
}

export async function countUsers(db: Executor): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateUserPassword(db: Executor, id: number, passwordHash: string): Promise<boolean> {
  const result = await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function updateUserPlan(db: Executor, id: number, plan: string): Promise<boolean> {
  const result = await db.updateTable('users').set({ plan }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** True when an error from insertUser or another insert is a unique-constraint violation, on either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint failed/.test(e?.message ?? '');
}
