/** Persistence of sessions. Reads a user triggers are scoped by `user_id`. */
import type { Updateable } from 'kysely';
import type { SessionRow, SessionsTable } from './schema.ts';
import type { Executor } from './users-store.ts';

export async function insertSession(db: Executor, session: SessionRow): Promise<SessionRow> {
  return db.insertInto('sessions').values(session).returningAll().executeTakeFirstOrThrow();
}

export async function findSession(db: Executor, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateSession(db: Executor, id: string, changes: Updateable<SessionsTable>): Promise<void> {
  await db.updateTable('sessions').set(changes).where('id', '=', id).execute();
}
