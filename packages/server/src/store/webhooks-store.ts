/**
 * Persistence of webhook endpoints, deliveries and delivery attempts. Reads a user triggers are scoped
 * by `user_id`; the dispatcher's queue operations are not (they run for every user).
 */
import type { DeliveryAttempt, DeliveryStatus, StoredWebhookEndpoint } from '../model.ts';
import type {
  NewWebhookDeliveryRow,
  WebhookDeliveryAttemptRow,
  WebhookDeliveryRow,
  WebhookDeliveryUpdate,
  WebhookEndpointRow,
  WebhookEndpointsTable,
} from './schema.ts';
import type { Executor } from './database.ts';

// ---- endpoints ----

/** What may change on an endpoint after it is created. */
export type EndpointChanges = Partial<Omit<StoredWebhookEndpoint, 'id' | 'userId' | 'createdAt'>>;

function toEndpoint(row: WebhookEndpointRow): StoredWebhookEndpoint {
  return {
    id: row.id,
    userId: row.user_id,
    url: row.url,
    description: row.description,
    eventPatterns: JSON.parse(row.event_patterns) as string[],
    enabled: row.enabled === 1,
    verifiedAt: row.verified_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    secretCiphertext: row.secret_ciphertext,
    previousSecretCiphertext: row.previous_secret_ciphertext,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    deletedAt: row.deleted_at,
  };
}

function toEndpointColumns(changes: EndpointChanges): Partial<WebhookEndpointsTable> {
  const columns: Partial<WebhookEndpointsTable> = {};
  if (changes.url !== undefined) columns.url = changes.url;
  if (changes.description !== undefined) columns.description = changes.description;
  if (changes.eventPatterns !== undefined) columns.event_patterns = JSON.stringify(changes.eventPatterns);
  if (changes.enabled !== undefined) columns.enabled = changes.enabled ? 1 : 0;
  if (changes.verifiedAt !== undefined) columns.verified_at = changes.verifiedAt;
  if (changes.updatedAt !== undefined) columns.updated_at = changes.updatedAt;
  if (changes.secretCiphertext !== undefined) columns.secret_ciphertext = changes.secretCiphertext;
  if (changes.previousSecretCiphertext !== undefined) columns.previous_secret_ciphertext = changes.previousSecretCiphertext;
  if (changes.previousSecretExpiresAt !== undefined) columns.previous_secret_expires_at = changes.previousSecretExpiresAt;
  if (changes.deletedAt !== undefined) columns.deleted_at = changes.deletedAt;
  return columns;
}

export async function insertEndpoint(db: Executor, endpoint: StoredWebhookEndpoint): Promise<StoredWebhookEndpoint> {
  const row = await db
    .insertInto('webhook_endpoints')
    .values({
      id: endpoint.id,
      user_id: endpoint.userId,
      url: endpoint.url,
      description: endpoint.description,
      event_patterns: JSON.stringify(endpoint.eventPatterns),
      enabled: endpoint.enabled ? 1 : 0,
      secret_ciphertext: endpoint.secretCiphertext,
      previous_secret_ciphertext: endpoint.previousSecretCiphertext,
      previous_secret_expires_at: endpoint.previousSecretExpiresAt,
      verified_at: endpoint.verifiedAt,
      created_at: endpoint.createdAt,
      updated_at: endpoint.updatedAt,
      deleted_at: endpoint.deletedAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toEndpoint(row);
}

/** One of the user's endpoints that is not deleted. */
export async function findEndpoint(db: Executor, userId: number, id: string): Promise<StoredWebhookEndpoint | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row && toEndpoint(row);
}

/** An endpoint in any state (the dispatcher checks deleted and disabled itself). */
export async function findEndpointById(db: Executor, id: string): Promise<StoredWebhookEndpoint | undefined> {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toEndpoint(row);
}

/** The user's endpoints that are not deleted, oldest first. */
export async function listEndpoints(db: Executor, userId: number): Promise<StoredWebhookEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toEndpoint);
}

export async function countEndpoints(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The enabled endpoints an event of this user may go to. Events without a user (system events such as
 * `worker.*`) go to the endpoints of administrators.
 */
export async function listReceivingEndpoints(db: Executor, userId: number | null): Promise<StoredWebhookEndpoint[]> {
  const live = db.selectFrom('webhook_endpoints').selectAll().where('enabled', '=', 1).where('deleted_at', 'is', null);
  const owned =
    userId === null ? live.where('user_id', 'in', db.selectFrom('users').select('id').where('is_admin', '=', 1)) : live.where('user_id', '=', userId);
  return (await owned.execute()).map(toEndpoint);
}

/** Updates one of the user's live endpoints; undefined when there is no such endpoint. */
export async function updateEndpoint(db: Executor, userId: number, id: string, changes: EndpointChanges): Promise<StoredWebhookEndpoint | undefined> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set(toEndpointColumns(changes))
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  return row && toEndpoint(row);
}

// ---- deliveries ----

export async function insertDelivery(db: Executor, delivery: NewWebhookDeliveryRow): Promise<WebhookDeliveryRow> {
  return db.insertInto('webhook_deliveries').values(delivery).returningAll().executeTakeFirstOrThrow();
}

/** One of the user's deliveries by its public id. */
export async function findDelivery(db: Executor, userId: number, deliveryId: string): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('delivery_id', '=', deliveryId).where('user_id', '=', userId).executeTakeFirst();
}

export async function findDeliveryBySeq(db: Executor, seq: number): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', seq).executeTakeFirst();
}

export interface DeliveryFilter {
  userId: number;
  endpointId?: string;
  status?: DeliveryStatus;
  eventType?: string;
  /** Only rows older than this position (the cursor). */
  beforeSeq?: number;
  limit: number;
}

/** The user's deliveries, newest first. */
export async function listDeliveries(db: Executor, filter: DeliveryFilter): Promise<WebhookDeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('user_id', '=', filter.userId);
  if (filter.endpointId !== undefined) query = query.where('endpoint_id', '=', filter.endpointId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.eventType !== undefined) query = query.where('event_type', '=', filter.eventType);
  if (filter.beforeSeq !== undefined) query = query.where('id', '<', filter.beforeSeq);
  return query.orderBy('id', 'desc').limit(filter.limit).execute();
}

/**
 * Deliveries whose attempt is due and that no live lease holds: pending ones past `next_retry_at`, and
 * 'delivering' ones whose sender's lease ran out (the node died mid-attempt). Earliest due first, leaving
 * out the endpoints in `skipEndpointIds` (those with no free slot, so one endpoint's backlog cannot fill
 * the batch and starve the others).
 */
export async function listDueDeliveries(db: Executor, now: string, limit: number, skipEndpointIds: string[] = []): Promise<WebhookDeliveryRow[]> {
  let query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('status', 'in', ['pending', 'delivering'])
    .where('next_retry_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]));
  if (skipEndpointIds.length > 0) query = query.where('endpoint_id', 'not in', skipEndpointIds);
  return query.orderBy('next_retry_at').limit(limit).execute();
}

/** When the earliest pending delivery falls due (null when nothing is pending). */
export async function nextDueTime(db: Executor): Promise<string | null> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('next_retry_at').as('due'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return (row?.due as string | null | undefined) ?? null;
}

/** Deliveries not yet settled (pending or being attempted), cluster-wide: the queue's depth for metrics. */
export async function countUnsettledDeliveries(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', 'in', ['pending', 'delivering'])
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/**
 * Takes the lease on a due delivery; true when this caller got it. The condition repeats the due check,
 * so of two nodes racing for one row exactly one wins.
 */
export async function claimDelivery(db: Executor, seq: number, now: string, leaseUntil: string, owner: string): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'delivering', lease_until: leaseUntil, lease_owner: owner, updated_at: now })
    .where('id', '=', seq)
    .where('status', 'in', ['pending', 'delivering'])
    .where('next_retry_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Writes the outcome of an attempt and drops the lease, only while `owner` still holds it. */
export async function settleDelivery(db: Executor, seq: number, owner: string, changes: WebhookDeliveryUpdate): Promise<WebhookDeliveryRow | undefined> {
  return db
    .updateTable('webhook_deliveries')
    .set({ ...changes, lease_until: null, lease_owner: null })
    .where('id', '=', seq)
    .where('lease_owner', '=', owner)
    .returningAll()
    .executeTakeFirst();
}

/** Ends an endpoint's pending deliveries as failed (the endpoint was deleted); rows being sent finish on their own. */
export async function failPendingDeliveries(db: Executor, endpointId: string, message: string, now: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_retry_at: null, error_message: message, updated_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

// ---- attempts ----

export async function insertAttempt(db: Executor, deliverySeq: number, attempt: DeliveryAttempt): Promise<void> {
  await db
    .insertInto('webhook_delivery_attempts')
    .values({
      delivery_seq: deliverySeq,
      attempt: attempt.attempt,
      started_at: attempt.startedAt,
      duration_ms: attempt.durationMs,
      http_status: attempt.httpStatus,
      error: attempt.error,
      succeeded: attempt.succeeded ? 1 : 0,
    })
    .execute();
}

export async function listAttempts(db: Executor, deliverySeq: number): Promise<DeliveryAttempt[]> {
  const rows = await db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_seq', '=', deliverySeq).orderBy('id').execute();
  return rows.map(toAttempt);
}

function toAttempt(row: WebhookDeliveryAttemptRow): DeliveryAttempt {
  return {
    attempt: row.attempt,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    httpStatus: row.http_status,
    error: row.error,
    succeeded: row.succeeded === 1,
  };
}
