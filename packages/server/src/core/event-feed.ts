/**
 * Follows the event outbox live, for the Server-Sent Events stream: replays events after a given
 * position (the client's `Last-Event-ID`), then yields new ones as they commit. A commit on this node
 * wakes followers at once; the poll interval picks up commits of other nodes.
 */
import type { EventNotifier, EventRecord } from './events.ts';
import type { Database } from '../store/database.ts';
import { latestEventSeq, listEventsAfter } from '../store/events-store.ts';

const BATCH = 200;
// How long a hole in the outbox ids may still be a transaction that has not committed yet.
const GAP_GRACE_MS = 3000;

export interface FollowOptions {
  /** Only this user's events; null = every event (administrators). */
  userId: number | null;
  /** Yield events after this outbox position. */
  afterSeq: number;
  signal: AbortSignal;
}

export class EventFeed {
  constructor(
    private readonly database: Database,
    private readonly notifier: EventNotifier,
    private readonly pollIntervalMs: number,
  ) {}

  /** The position of the newest event: following from it yields only what happens next. */
  async latestSeq(): Promise<number> {
    return latestEventSeq(this.database.db);
  }

  /**
   * Yields events in outbox order until the signal aborts. On PostgreSQL a transaction can commit after
   * one that took a later id, so a hole in the ids may fill in a moment later: the feed waits for a young
   * hole (up to GAP_GRACE_MS after the event beyond it was written) instead of skipping past it. That is
   * why it reads every user's rows and filters here, rather than asking the store for one user's.
   */
  async *follow(options: FollowOptions): AsyncGenerator<EventRecord> {
    let after = options.afterSeq;
    while (!options.signal.aborted) {
      const events = await listEventsAfter(this.database.db, after, BATCH);
      let waitMs = this.pollIntervalMs;
      for (const event of events) {
        const age = Date.now() - Date.parse(event.createdAt);
        if (event.seq !== after + 1 && age < GAP_GRACE_MS) {
          waitMs = Math.min(waitMs, GAP_GRACE_MS - age);
          break;
        }
        after = event.seq;
        if (options.userId === null || event.userId === options.userId) yield event;
      }
      if (events.length < BATCH || waitMs < this.pollIntervalMs) await this.nextChange(options.signal, waitMs);
    }
  }

  /** Resolves on the next local commit, after `waitMs`, or on abort, whichever is first. */
  private nextChange(signal: AbortSignal, waitMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.notifier.off('committed', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      this.notifier.on('committed', done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
