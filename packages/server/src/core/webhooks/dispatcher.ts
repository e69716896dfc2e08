/**
 * The webhook dispatcher: turns outbox events into deliveries and sends them, at least once.
 *
 * Fan-out: each event nobody has dispatched becomes one delivery row per matching enabled endpoint of
 * the event's user, in one transaction that also marks the event dispatched (first writer wins, so two
 * nodes never fan out one event twice).
 *
 * Sending: the deliveries table is the queue. A due row is claimed with a lease (a conditional UPDATE,
 * so of two nodes exactly one wins), sent, and settled in one transaction with its attempt record. A
 * crash leaves the row claimed until the lease runs out, after which any node resumes it; nothing is
 * kept only in memory. Attempts run concurrently up to `concurrency`, one endpoint gets at most a
 * quarter of the slots, and each attempt has a hard timeout, so a slow or hostile receiver delays only
 * its own deliveries.
 *
 * It wakes on `EventNotifier` commits, when an attempt finishes, when the next retry falls due, and
 * every `pollIntervalMs` (for work committed by other nodes).
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Clock } from '../clock.ts';
import type { EventNotifier } from '../events.ts';
import { newDeliveryRow } from './deliveries.ts';
import { matchesAny } from './patterns.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { WebhookTransport } from './transport.ts';
import { signedHeaders, signingSecrets, toWireEvent } from './wire.ts';
import type { Database } from '../../store/database.ts';
import { claimEventDispatch, findEventByEventId, listUndispatchedEvents } from '../../store/events-store.ts';
import type { WebhookDeliveryRow, WebhookDeliveryUpdate } from '../../store/schema.ts';
import {
  claimDelivery,
  findDeliveryBySeq,
  findEndpointById,
  insertAttempt,
  insertDelivery,
  listDueDeliveries,
  listReceivingEndpoints,
  nextDueTime,
  settleDelivery,
} from '../../store/webhooks-store.ts';

export interface DispatcherOptions {
  pollIntervalMs: number;
  /** Delay before retry n (1-based) is `retryScheduleMs[n - 1]`; the last delay repeats. */
  retryScheduleMs: number[];
  maxAttempts: number;
  timeoutMs: number;
  concurrency: number;
}

/** What one attempt did, emitted as 'attempt' (the process decides what to log). */
export interface AttemptReport {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  status: string;
}

const FAN_OUT_BATCH = 100;
const DUE_BATCH = 200;
// The lease outlives the attempt's own timeout by this much, to cover writing the outcome.
const LEASE_MARGIN_MS = 15_000;
const MAX_ERROR_LENGTH = 500;

interface InFlight {
  endpointId: string;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Emits 'attempt' (AttemptReport) after each attempt and 'failure' (Error) when a pass over the queue
 * fails (e.g. the store is unreachable); the next pass tries again.
 */
export class WebhookDispatcher extends EventEmitter {
  private readonly nodeToken = randomBytes(6).toString('hex');
  private leaseCounter = 0;
  private readonly inFlight = new Map<number, InFlight>();
  private readonly perEndpointLimit: number;
  private running: Promise<void> | null = null;
  private rerun = false;
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private readonly onCommitted = () => this.wake();

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly box: SecretBox,
    private readonly transport: WebhookTransport,
    private readonly options: DispatcherOptions,
  ) {
    super();
    this.perEndpointLimit = Math.max(1, Math.floor(options.concurrency / 4));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.notifier.on('committed', this.onCommitted);
    this.wake();
  }

  /** Stops taking work, aborts attempts in flight (their rows go back to pending) and waits for them. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.notifier.off('committed', this.onCommitted);
    if (this.timer) clearTimeout(this.timer);
    // The pass under way notices `stopped` and starts nothing more; then every attempt it left is aborted.
    await this.running;
    for (const flight of this.inFlight.values()) flight.controller.abort();
    await Promise.all([...this.inFlight.values()].map((flight) => flight.done));
  }

  /** Runs a pass soon; passes never overlap (a wake during one runs another after it). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = (async () => {
      do {
        this.rerun = false;
        try {
          await this.pass();
        } catch (error) {
          this.emit('failure', error);
          this.armTimer(this.options.pollIntervalMs);
        }
      } while (this.rerun && !this.stopped);
      this.running = null;
    })();
  }

  /**
   * Lease columns for a delivery row that the caller inserts already claimed, to send it at once with
   * `sendClaimed` (test events and replays answer with the outcome); the queue never races for it.
   */
  leaseFor(now: Date): { status: 'delivering'; lease_owner: string; lease_until: string } {
    return {
      status: 'delivering',
      lease_owner: `${this.nodeToken}-${++this.leaseCounter}`,
      lease_until: new Date(now.getTime() + this.options.timeoutMs + LEASE_MARGIN_MS).toISOString(),
    };
  }

  /** Sends a delivery inserted with `leaseFor`, and resolves when its attempt is settled. */
  async sendClaimed(row: WebhookDeliveryRow): Promise<void> {
    if (row.lease_owner === null) throw new Error('sendClaimed needs a row inserted with leaseFor()');
    await this.launch({ ...row, lease_owner: row.lease_owner }).done;
  }

  private async pass(): Promise<void> {
    await this.fanOut();
    await this.startDue();
    await this.scheduleNextPass();
  }

  private async fanOut(): Promise<void> {
    for (;;) {
      const events = await listUndispatchedEvents(this.database.db, FAN_OUT_BATCH);
      for (const event of events) {
        if (this.stopped) return;
        const now = this.clock.now();
        await this.database.db.transaction().execute(async (trx) => {
          if (!(await claimEventDispatch(trx, event.seq, now.toISOString()))) return;
          for (const endpoint of await listReceivingEndpoints(trx, event.userId)) {
            if (!matchesAny(endpoint.eventPatterns, event.type)) continue;
            await insertDelivery(trx, newDeliveryRow({ endpointId: endpoint.id, userId: endpoint.userId, event, now }));
          }
        });
      }
      if (events.length < FAN_OUT_BATCH) return;
    }
  }

  /** Starts due deliveries while there are free slots, at most `perEndpointLimit` per endpoint. */
  private async startDue(): Promise<void> {
    for (;;) {
      let free = this.options.concurrency - this.inFlight.size;
      if (free <= 0 || this.stopped) return;
      const perEndpoint = new Map<string, number>();
      for (const flight of this.inFlight.values()) perEndpoint.set(flight.endpointId, (perEndpoint.get(flight.endpointId) ?? 0) + 1);
      const full = [...perEndpoint].filter(([, busy]) => busy >= this.perEndpointLimit).map(([id]) => id);
      const due = await listDueDeliveries(this.database.db, this.clock.now().toISOString(), DUE_BATCH, full);
      let started = 0;
      let skipped = false;
      for (const candidate of due) {
        if (free <= 0 || this.stopped) return;
        const busy = perEndpoint.get(candidate.endpoint_id) ?? 0;
        if (busy >= this.perEndpointLimit || this.inFlight.has(candidate.id)) {
          skipped = true;
          continue;
        }
        const row = await this.claim(candidate.id);
        if (!row) continue;
        perEndpoint.set(row.endpoint_id, busy + 1);
        free -= 1;
        started += 1;
        this.launch(row);
      }
      // Rows of an endpoint that filled up during this batch were passed over: look again past them.
      if (!skipped || started === 0) return;
    }
  }

  /** Sleeps until the next retry falls due, or the poll interval, whichever is sooner. */
  private async scheduleNextPass(): Promise<void> {
    if (this.stopped) return;
    let delay = this.options.pollIntervalMs;
    const due = await nextDueTime(this.database.db);
    if (due !== null) {
      const untilDue = Date.parse(due) - this.clock.now().getTime();
      // A due row not started now waits for a free slot: finishing attempts wake the dispatcher.
      if (untilDue > 0) delay = Math.min(delay, untilDue);
    }
    this.armTimer(delay);
  }

  private armTimer(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), delayMs);
    this.timer.unref();
  }

  /** Takes the lease; the claimed row, or undefined when it is not due or another sender holds it. */
  private async claim(seq: number): Promise<(WebhookDeliveryRow & { lease_owner: string }) | undefined> {
    const now = this.clock.now();
    const { lease_owner: owner, lease_until: leaseUntil } = this.leaseFor(now);
    if (!(await claimDelivery(this.database.db, seq, now.toISOString(), leaseUntil, owner))) return undefined;
    const row = await findDeliveryBySeq(this.database.db, seq);
    return row && row.lease_owner === owner ? { ...row, lease_owner: owner } : undefined;
  }

  private launch(row: WebhookDeliveryRow & { lease_owner: string }): InFlight {
    const controller = new AbortController();
    const flight: InFlight = {
      endpointId: row.endpoint_id,
      controller,
      done: this.attempt(row, controller.signal)
        .catch((error: unknown) => {
          this.emit('failure', error);
        })
        .finally(() => {
          this.inFlight.delete(row.id);
          this.wake();
        }),
    };
    this.inFlight.set(row.id, flight);
    // Claimed while stop() was aborting: give it straight back.
    if (this.stopped) controller.abort();
    return flight;
  }

  private async attempt(row: WebhookDeliveryRow & { lease_owner: string }, signal: AbortSignal): Promise<void> {
    const db = this.database.db;
    const owner = row.lease_owner;
    const [endpoint, event] = await Promise.all([findEndpointById(db, row.endpoint_id), findEventByEventId(db, row.event_id)]);
    const gone =
      !endpoint || endpoint.deletedAt !== null
        ? 'the endpoint was deleted'
        : !endpoint.enabled
          ? 'the endpoint is disabled'
          : !event
            ? 'the event no longer exists'
            : null;
    if (gone || !endpoint || !event) {
      await settleDelivery(db, row.id, owner, {
        status: 'failed',
        next_retry_at: null,
        error_message: `not sent: ${gone}`,
        updated_at: this.clock.now().toISOString(),
      });
      return;
    }

    const startedAt = this.clock.now();
    const body = JSON.stringify(toWireEvent(event));
    let httpStatus: number | null = null;
    let error: string | null;
    let durationMs = 0;
    try {
      const headers = signedHeaders(signingSecrets(endpoint, this.box, startedAt), event.id, startedAt, body);
      const response = await this.transport.send({ url: endpoint.url, headers, body, timeoutMs: this.options.timeoutMs, signal });
      if (response.aborted) {
        // Shutting down: hand the row back untouched; this node or another sends it again.
        await settleDelivery(db, row.id, owner, { status: 'pending', updated_at: this.clock.now().toISOString() });
        return;
      }
      httpStatus = response.status;
      durationMs = response.durationMs;
      error = describeFailure(response.status, response.error);
    } catch (cause) {
      error = (cause as Error).message;
    }

    const succeeded = error === null;
    const finishedAt = this.clock.now();
    const attempt = row.scheduled_attempt;
    const changes: WebhookDeliveryUpdate = {
      last_attempt_at: startedAt.toISOString(),
      final_http_status: httpStatus,
      error_message: error?.slice(0, MAX_ERROR_LENGTH) ?? null,
      updated_at: finishedAt.toISOString(),
    };
    if (succeeded) Object.assign(changes, { status: 'succeeded', delivered_at: finishedAt.toISOString(), next_retry_at: null });
    else if (attempt >= this.options.maxAttempts) Object.assign(changes, { status: 'failed', next_retry_at: null });
    else {
      const schedule = this.options.retryScheduleMs;
      const delayMs = schedule[Math.min(attempt, schedule.length) - 1]!;
      Object.assign(changes, { status: 'pending', scheduled_attempt: attempt + 1, next_retry_at: new Date(finishedAt.getTime() + delayMs).toISOString() });
    }
    await db.transaction().execute(async (trx) => {
      await insertAttempt(trx, row.id, {
        attempt,
        startedAt: startedAt.toISOString(),
        durationMs,
        httpStatus,
        error: changes.error_message ?? null,
        succeeded,
      });
      await settleDelivery(trx, row.id, owner, changes);
    });
    this.emit('attempt', {
      deliveryId: row.delivery_id,
      endpointId: row.endpoint_id,
      eventId: row.event_id,
      eventType: row.event_type,
      attempt,
      httpStatus,
      error,
      durationMs,
      status: changes.status as string,
    } satisfies AttemptReport);
  }
}

/** Why an attempt failed, or null when the receiver took it (any 2xx). */
function describeFailure(status: number | null, error: string | null): string | null {
  if (status === null) return error ?? 'no response';
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return `receiver answered HTTP ${status}: redirects are not followed, give the final URL`;
  return `receiver answered HTTP ${status}`;
}
