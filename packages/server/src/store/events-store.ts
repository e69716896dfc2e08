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

/** Events no consumer has fanned out yet, oldest first. */
export async function listUndispatchedEvents(db: Executor, limit: number): Promise<EventRow[]> {
  return db.selectFrom('events').selectAll().where('dispatched_at', 'is', null).orderBy('id').limit(limit).execute();
}

/**
 * Marks an event dispatched unless another node already did; true when this caller won. Run it first in
 * the transaction that writes the event's deliveries, so an event is fanned out exactly once.
 */
export async function claimEventDispatch(db: Executor, id: number, at: string): Promise<boolean> {
  const result = await db.updateTable('events').set({ dispatched_at: at }).where('id', '=', id).where('dispatched_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findEventByEventId(db: Executor, eventId: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').selectAll().where('event_id', '=', eventId).executeTakeFirst();
}

/** The outbox position of the newest event (0 when there is none). */
export async function latestEventSeq(db: Executor): Promise<number> {
  const row = await db.selectFrom('events').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst();
  return Number(row?.max ?? 0);
}
