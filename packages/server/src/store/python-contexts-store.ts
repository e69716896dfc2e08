/** Persistence of a session's extra Python contexts. */
import type { PythonContext } from '../model.ts';
import type { Executor } from './database.ts';
import type { Selectable } from 'kysely';
import type { PythonContextsTable } from './schema.ts';

function toContext(row: Selectable<PythonContextsTable>): PythonContext {
  return { id: row.id, userId: row.user_id, sessionId: row.session_id, cwd: row.cwd, createdAt: row.created_at };
}

export async function insertPythonContext(db: Executor, context: PythonContext): Promise<PythonContext> {
  await db
    .insertInto('python_contexts')
    .values({ id: context.id, user_id: context.userId, session_id: context.sessionId, cwd: context.cwd, created_at: context.createdAt })
    .execute();
  return context;
}

/** A context of the user's session; undefined for anyone else's or none. */
export async function findPythonContext(db: Executor, userId: number, sessionId: string, id: string): Promise<PythonContext | undefined> {
  const row = await db
    .selectFrom('python_contexts')
    .selectAll()
    .where('id', '=', id)
    .where('session_id', '=', sessionId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row && toContext(row);
}

/** A session's contexts, oldest first. */
export async function listPythonContexts(db: Executor, sessionId: string): Promise<PythonContext[]> {
  const rows = await db.selectFrom('python_contexts').selectAll().where('session_id', '=', sessionId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toContext);
}

export async function countPythonContexts(db: Executor, sessionId: string): Promise<number> {
  const row = await db
    .selectFrom('python_contexts')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Deletes a context; false when there was none. */
export async function deletePythonContext(db: Executor, sessionId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('python_contexts').where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
