/** The event outbox table. */
import type { EventRow } from './schema.ts';
import type { Executor } from './users-store.ts';

export async function insertEvent(db: Executor, event: Omit<EventRow, 'id' | 'dispatched_at'>): Promise<EventRow> {
  return db
    .insertInto('events')
    .values({ ...event, dispatched_at: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Events after `afterId` in outbox order, optionally only one user's. */
export async function listEventsAfter(db: Executor, afterId: number, limit: number, userId?: number): Promise<EventRow[]> {
  let query = db.selectFrom('events').selectAll().where('id', '>', afterId);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  return query.orderBy('id').limit(limit).execute();
}
