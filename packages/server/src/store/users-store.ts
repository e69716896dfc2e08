/** Persistence of users. Functions take any executor (the database or a transaction). */
import type { User } from '../model.ts';
import type { UserRow } from './schema.ts';
import type { Executor } from './database.ts';

function toUser(row: UserRow): User {
  return { id: row.id, username: row.username, plan: row.plan, isAdmin: row.is_admin === 1, createdAt: row.created_at };
}

/** Inserts a user; throws the driver's unique-violation error when the username is taken. */
export async function insertUser(db: Executor, user: Omit<User, 'id'> & { passwordHash: string }): Promise<User> {
  const row = await db
    .insertInto('users')
    .values({ username: user.username, password_hash: user.passwordHash, plan: user.plan, is_admin: user.isAdmin ? 1 : 0, created_at: user.createdAt })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toUser(row);
}

export async function findUserById(db: Executor, id: number): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toUser(row);
}

export async function findUserByUsername(db: Executor, username: string): Promise<User | undefined> {
  return (await findUserWithPasswordHash(db, username))?.user;
}

/** The user and their password hash, for sign-in only. */
export async function findUserWithPasswordHash(db: Executor, username: string): Promise<{ user: User; passwordHash: string } | undefined> {
  const row = await db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  return row && { user: toUser(row), passwordHash: row.password_hash };
}

export async function countUsers(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
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

/** Every user, by id (the administrators' user list). */
export async function listUsers(db: Executor): Promise<User[]> {
  return (await db.selectFrom('users').select(['id', 'username', 'plan', 'is_admin', 'created_at']).orderBy('id').execute()).map((row) =>
    toUser({ ...row, password_hash: '' }),
  );
}
