/**
 * The event outbox. A state change records its event with `recordEvent` inside the same transaction, so
 * an event exists exactly when its change committed. Consumers (webhook dispatcher, live stream) read the
 * table in `id` order; `EventNotifier` wakes them right after a commit instead of waiting for their poll.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Clock } from './clock.ts';
import { insertEvent } from '../store/events-store.ts';
import type { EventRow } from '../store/schema.ts';
import type { Executor } from '../store/users-store.ts';

export interface NewEvent {
  /** Dotted name, family first: `session.created`, `vm.expired`, `api_key.deleted`… */
  type: string;
  /** The user the event belongs to (who may receive it); null for system events. */
  userId: number | null;
  /** The id of the thing the event is about (session, VM, key…). */
  subjectId?: string | null;
  data: Record<string, unknown>;
}

export interface EventRecord {
  seq: number;
  id: string;
  type: string;
  group: string;
  userId: number | null;
  subjectId: string | null;
  data: Record<string, unknown>;
  createdAt: string;
}

/** `evt_` + 48-bit millisecond time + 80 random bits, base32-ish hex: unique, and sortable by time. */
export function newEventId(now: Date): string {
  return `evt_${now.getTime().toString(16).padStart(12, '0')}${randomBytes(10).toString('hex')}`;
}

/** The family of an event type: the part before the first dot (`vm.started` → `vm`). */
export function eventGroup(type: string): string {
  return type.split('.')[0] ?? type;
}

export function toEventRecord(row: EventRow): EventRecord {
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

/** Records an event in the caller's transaction (or directly, for changes that are a single write). */
export async function recordEvent(db: Executor, clock: Clock, event: NewEvent): Promise<EventRecord> {
  const now = clock.now();
  const row = await insertEvent(db, {
    event_id: newEventId(now),
    user_id: event.userId,
    type: event.type,
    event_group: eventGroup(event.type),
    subject_id: event.subjectId ?? null,
    payload: JSON.stringify(event.data),
    created_at: now.toISOString(),
  });
  return toEventRecord(row);
}

/** In-process wake-up signal for outbox consumers; call `committed()` after a transaction that recorded events. */
export class EventNotifier extends EventEmitter {
  committed(): void {
    this.emit('committed');
  }
}
