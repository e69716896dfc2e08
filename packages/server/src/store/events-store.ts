/** The event outbox table; payloads are JSON text. */
import type { EventRecord } from '../model.ts';
import type { EventRow } from './schema.ts';
import type { Executor } from './database.ts';

function toEventRecord(row: EventRow): EventRecord {
  return {
    seq: row.id,
    id: row.event_id,
    type: row.type,
    group: row.event_group,
    userId: row.user_id,
    subjectId: row.subject_id,
    data: JSON.parse(row.payload) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

export async function insertEvent(db: Executor, event: Omit<EventRecord, 'seq'>): Promise<EventRecord> {
  const row = await db
    .insertInto('events')
    .values({
      event_id: event.id,
      user_id: event.userId,
      type: event.type,
      event_group: event.group,
      subject_id: event.subjectId,
      payload: JSON.stringify(event.data),
      created_at: event.createdAt,
      dispatched_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toEventRecord(row);
}

/** Events after `afterSeq` in outbox order, optionally only one user's. */
export async function listEventsAfter(db: Executor, afterSeq: number, limit: number, userId?: number): Promise<EventRecord[]> {
  let query = db.selectFrom('events').selectAll().where('id', '>', afterSeq);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  return (await query.orderBy('id').limit(limit).execute()).map(toEventRecord);
}

/** Events no consumer has fanned out yet, oldest first. */
export async function listUndispatchedEvents(db: Executor, limit: number): Promise<EventRecord[]> {
  return (await db.selectFrom('events').selectAll().where('dispatched_at', 'is', null).orderBy('id').limit(limit).execute()).map(toEventRecord);
}

/**
 * Marks an event dispatched unless another node already did; true when this caller won. Run it first in
 * the transaction that writes the event's deliveries, so an event is fanned out exactly once.
 */
export async function claimEventDispatch(db: Executor, seq: number, at: string): Promise<boolean> {
  const result = await db.updateTable('events').set({ dispatched_at: at }).where('id', '=', seq).where('dispatched_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findEventByEventId(db: Executor, eventId: string): Promise<EventRecord | undefined> {
  const row = await db.selectFrom('events').selectAll().where('event_id', '=', eventId).executeTakeFirst();
  return row && toEventRecord(row);
}

/** The outbox position of the newest event (0 when there is none). */
export async function latestEventSeq(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('max'))
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}
