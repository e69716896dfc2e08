/**
 * Webhook endpoints and their delivery log, for one user at a time: another user's endpoint or delivery
 * id is "not found". The signing secret is shown when an endpoint is created and when it is rotated,
 * never again. Creating, changing, deleting an endpoint and rotating its secret are audited in the same
 * transaction as the change.
 */
import { randomBytes } from 'node:crypto';
import { recordAudit, type AuditActor } from '../audit.ts';
import type { Clock } from '../clock.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { recordEvent, type EventNotifier } from '../events.ts';
import { isOneOf, type StoredWebhookEndpoint, type WebhookEndpoint } from '../../model.ts';
import { checkEndpointUrl } from './address-policy.ts';
import { DELIVERY_STATUSES, newDeliveryRow, toDelivery, type DeliveryAttempt, type WebhookDelivery } from './deliveries.ts';
import type { WebhookDispatcher } from './dispatcher.ts';
import { normalizePatterns } from './patterns.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { generateSigningSecret } from './signing-secret.ts';
import type { WebhookTransport } from './transport.ts';
import { signedHeaders, signingSecrets } from './wire.ts';
import type { Database } from '../../store/database.ts';
import { claimEventDispatch, findEventByEventId } from '../../store/events-store.ts';
import type { WebhookDeliveryRow } from '../../store/schema.ts';
import {
  type EndpointChanges as StoredEndpointChanges,
  countEndpoints,
  failPendingDeliveries,
  findDelivery,
  findDeliveryBySeq,
  findEndpoint,
  insertDelivery,
  insertEndpoint,
  listAttempts,
  listDeliveries,
  listEndpoints,
  updateEndpoint,
} from '../../store/webhooks-store.ts';

export type { WebhookEndpoint };

export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  /** `whsec_…`: shown here and by rotate-secret only. */
  secret: string;
}

export interface EndpointInput {
  url: string;
  /** Default: every event (`["*"]`). */
  eventPatterns?: string[];
  description?: string | null;
  enabled?: boolean;
}

export type EndpointChanges = Partial<EndpointInput>;

export interface DeliveryQuery {
  endpointId?: string | null;
  status?: string | null;
  eventType?: string | null;
  cursor?: string | null;
  limit: number;
}

export interface VerificationResult {
  endpointId: string;
  /** The receiver answered 2xx to the signed challenge. */
  verified: boolean;
  /** The receiver's answer contained the challenge (the strongest proof that it reads and checks the request). */
  challengeEchoed: boolean;
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookServiceOptions {
  allowPrivate: boolean;
  secretGraceSeconds: number;
  timeoutMs: number;
}

export const MAX_ENDPOINTS_PER_USER = 50;
const MAX_DESCRIPTION_LENGTH = 500;
const MAX_URL_LENGTH = 2048;

export function newEndpointId(): string {
  return `we_${randomBytes(12).toString('hex')}`;
}

export class WebhookService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly box: SecretBox,
    private readonly dispatcher: WebhookDispatcher,
    private readonly transport: WebhookTransport,
    private readonly options: WebhookServiceOptions,
  ) {}

  async create(userId: number, input: EndpointInput, actor: AuditActor): Promise<CreatedWebhookEndpoint> {
    const url = this.normalizeUrl(input.url);
    const patterns = normalizePatterns(input.eventPatterns ?? ['*']);
    const description = normalizeDescription(input.description);
    const now = this.clock.now().toISOString();
    const id = newEndpointId();
    const secret = generateSigningSecret();
    const stored = await this.database.db.transaction().execute(async (trx) => {
      if ((await countEndpoints(trx, userId)) >= MAX_ENDPOINTS_PER_USER) {
        throw badRequest(`a user may have at most ${MAX_ENDPOINTS_PER_USER} webhook endpoints: delete one first`);
      }
      const inserted = await insertEndpoint(trx, {
        id,
        userId,
        url,
        description,
        eventPatterns: patterns,
        enabled: input.enabled !== false,
        secretCiphertext: this.box.seal(secret, id),
        previousSecretCiphertext: null,
        previousSecretExpiresAt: null,
        verifiedAt: null,
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      });
      await recordAudit(trx, {
        actor,
        action: 'webhook_endpoint.create',
        target: { type: 'webhook_endpoint', id },
        outcome: 'success',
        detail: { url, event_patterns: patterns },
        at: this.clock.now(),
      });
      return inserted;
    });
    return { ...toEndpoint(stored), secret };
  }

  async list(userId: number): Promise<WebhookEndpoint[]> {
    return (await listEndpoints(this.database.db, userId)).map(toEndpoint);
  }

  async get(userId: number, id: string): Promise<WebhookEndpoint> {
    return toEndpoint(await this.requireEndpoint(userId, id));
  }

  /** Applies the fields present; a changed URL or pattern list is audited. */
  async update(userId: number, id: string, changes: EndpointChanges, actor: AuditActor): Promise<WebhookEndpoint> {
    const update: StoredEndpointChanges = {};
    if (changes.url !== undefined) update.url = this.normalizeUrl(changes.url);
    if (changes.eventPatterns !== undefined) update.eventPatterns = normalizePatterns(changes.eventPatterns);
    if (changes.description !== undefined) update.description = normalizeDescription(changes.description);
    if (changes.enabled !== undefined) update.enabled = changes.enabled;
    const changed = Object.keys(update);
    if (changed.length === 0) return this.get(userId, id);
    update.updatedAt = this.clock.now().toISOString();
    const row = await this.database.db.transaction().execute(async (trx) => {
      const updated = await updateEndpoint(trx, userId, id, update);
      if (!updated) throw notFound(`webhook endpoint ${id}`);
      await recordAudit(trx, {
        actor,
        action: 'webhook_endpoint.update',
        target: { type: 'webhook_endpoint', id },
        outcome: 'success',
        detail: { changed: changed.map((field) => (field === 'eventPatterns' ? 'event_patterns' : field)), url: updated.url },
        at: this.clock.now(),
      });
      return updated;
    });
    return toEndpoint(row);
  }

  /** Deletes an endpoint: nothing more is sent to it; its pending deliveries end as failed and stay listed. */
  async delete(userId: number, id: string, actor: AuditActor): Promise<WebhookEndpoint> {
    const now = this.clock.now().toISOString();
    const row = await this.database.db.transaction().execute(async (trx) => {
      const deleted = await updateEndpoint(trx, userId, id, { deletedAt: now, enabled: false, updatedAt: now });
      if (!deleted) throw notFound(`webhook endpoint ${id}`);
      await failPendingDeliveries(trx, id, 'not sent: the endpoint was deleted', now);
      await recordAudit(trx, {
        actor,
        action: 'webhook_endpoint.delete',
        target: { type: 'webhook_endpoint', id },
        outcome: 'success',
        detail: { url: deleted.url },
        at: this.clock.now(),
      });
      return deleted;
    });
    return toEndpoint(row);
  }

  /**
   * Replaces the signing secret. The old one keeps signing next to the new one for the grace period
   * (`SANDBOXD_WEBHOOK_SECRET_GRACE_SECONDS`), so receivers can switch without losing a delivery; a
   * second rotation within it drops the oldest secret at once.
   */
  async rotateSecret(userId: number, id: string, actor: AuditActor): Promise<{ endpointId: string; secret: string }> {
    const now = this.clock.now();
    const secret = generateSigningSecret();
    const graceMs = this.options.secretGraceSeconds * 1000;
    await this.database.db.transaction().execute(async (trx) => {
      const endpoint = await findEndpoint(trx, userId, id);
      if (!endpoint) throw notFound(`webhook endpoint ${id}`);
      await updateEndpoint(trx, userId, id, {
        secretCiphertext: this.box.seal(secret, id),
        previousSecretCiphertext: graceMs > 0 ? endpoint.secretCiphertext : null,
        previousSecretExpiresAt: graceMs > 0 ? new Date(now.getTime() + graceMs).toISOString() : null,
        updatedAt: now.toISOString(),
      });
      await recordAudit(trx, {
        actor,
        action: 'webhook_endpoint.rotate_secret',
        target: { type: 'webhook_endpoint', id },
        outcome: 'success',
        detail: { previous_secret_valid_until: graceMs > 0 ? new Date(now.getTime() + graceMs).toISOString() : null },
        at: now,
      });
    });
    return { endpointId: id, secret };
  }

  /**
   * Sends a `webhook.test` event to this endpoint only (it is recorded in the outbox already dispatched,
   * so no other endpoint gets it) and answers with the delivery after its first attempt.
   */
  async sendTest(userId: number, id: string): Promise<WebhookDelivery> {
    const endpoint = await this.requireEndpoint(userId, id);
    requireEnabled(endpoint);
    const now = this.clock.now();
    const row = await this.database.db.transaction().execute(async (trx) => {
      const event = await recordEvent(trx, this.clock, {
        type: 'webhook.test',
        userId,
        subjectId: endpoint.id,
        data: { endpoint_id: endpoint.id, message: 'This is a test event from sandboxd.' },
      });
      await claimEventDispatch(trx, event.seq, now.toISOString());
      return insertDelivery(trx, { ...newDeliveryRow({ endpointId: endpoint.id, userId, event, now }), ...this.dispatcher.leaseFor(now) });
    });
    this.notifier.committed();
    return this.sendAndReport(row);
  }

  /** Sends the event of an earlier delivery again, as a new delivery that names the one it replays. */
  async replay(userId: number, deliveryId: string): Promise<WebhookDelivery> {
    const original = await findDelivery(this.database.db, userId, deliveryId);
    if (!original) throw notFound(`webhook delivery ${deliveryId}`);
    const endpoint = await findEndpoint(this.database.db, userId, original.endpoint_id);
    if (!endpoint) throw notFound(`webhook endpoint ${original.endpoint_id} of delivery ${deliveryId} (it was deleted)`);
    requireEnabled(endpoint);
    const event = await findEventByEventId(this.database.db, original.event_id);
    if (!event) throw notFound(`event ${original.event_id} of delivery ${deliveryId}`);
    const now = this.clock.now();
    const row = await insertDelivery(this.database.db, {
      ...newDeliveryRow({
        endpointId: endpoint.id,
        userId,
        event,
        now,
        replayOf: original.delivery_id,
      }),
      ...this.dispatcher.leaseFor(now),
    });
    return this.sendAndReport(row);
  }

  /**
   * Sends a signed `webhook.verify` challenge to the endpoint (not recorded as a delivery) and reports
   * whether the receiver answered 2xx, and whether it echoed the challenge back.
   */
  async verify(userId: number, id: string): Promise<VerificationResult> {
    const endpoint = await this.requireEndpoint(userId, id);
    const now = this.clock.now();
    const challenge = randomBytes(16).toString('hex');
    const messageId = `vrf_${randomBytes(12).toString('hex')}`;
    const body = JSON.stringify({ id: messageId, type: 'webhook.verify', timestamp: now.toISOString(), data: { endpoint_id: endpoint.id, challenge } });
    let secrets: string[];
    try {
      secrets = signingSecrets(endpoint, this.box, now);
    } catch (error) {
      return { endpointId: endpoint.id, verified: false, challengeEchoed: false, httpStatus: null, error: (error as Error).message, durationMs: 0 };
    }
    const headers = signedHeaders(secrets, messageId, now, body);
    const response = await this.transport.send({ url: endpoint.url, headers, body, timeoutMs: this.options.timeoutMs });
    const verified = response.status !== null && response.status >= 200 && response.status < 300;
    if (verified) await updateEndpoint(this.database.db, userId, id, { verifiedAt: this.clock.now().toISOString() });
    return {
      endpointId: endpoint.id,
      verified,
      challengeEchoed: verified && response.body.includes(challenge),
      httpStatus: response.status,
      error: verified ? null : (response.error ?? `receiver answered HTTP ${response.status}`),
      durationMs: response.durationMs,
    };
  }

  /** A page of the user's deliveries, newest first. */
  async listDeliveries(userId: number, query: DeliveryQuery): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
    const status = query.status || undefined;
    if (status !== undefined && !isOneOf(DELIVERY_STATUSES, status)) throw badRequest(`status must be one of ${DELIVERY_STATUSES.join(', ')}`);
    const rows = await listDeliveries(this.database.db, {
      userId,
      ...(query.endpointId ? { endpointId: query.endpointId } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(query.eventType ? { eventType: query.eventType } : {}),
      ...(query.cursor ? { beforeSeq: decodeCursor(query.cursor) } : {}),
      limit: query.limit + 1,
    });
    const page = pageOf(rows, query.limit, (row) => row.id);
    return { items: page.items.map(toDelivery), nextCursor: page.nextCursor };
  }

  /** One of the user's deliveries with every attempt made so far. */
  async getDelivery(userId: number, deliveryId: string): Promise<WebhookDelivery & { attempts: DeliveryAttempt[] }> {
    const row = await findDelivery(this.database.db, userId, deliveryId);
    if (!row) throw notFound(`webhook delivery ${deliveryId}`);
    return { ...toDelivery(row), attempts: await listAttempts(this.database.db, row.id) };
  }

  private async sendAndReport(row: WebhookDeliveryRow): Promise<WebhookDelivery> {
    await this.dispatcher.sendClaimed(row);
    return toDelivery((await findDeliveryBySeq(this.database.db, row.id)) ?? row);
  }

  private async requireEndpoint(userId: number, id: string): Promise<StoredWebhookEndpoint> {
    const row = await findEndpoint(this.database.db, userId, id);
    if (!row) throw notFound(`webhook endpoint ${id}`);
    return row;
  }

  private normalizeUrl(url: string): string {
    if (url.length > MAX_URL_LENGTH) throw badRequest(`url must be at most ${MAX_URL_LENGTH} characters`);
    return checkEndpointUrl(url, this.options.allowPrivate);
  }
}

function requireEnabled(endpoint: StoredWebhookEndpoint): void {
  if (!endpoint.enabled) throw conflict(`webhook endpoint ${endpoint.id} is disabled: enable it first (PATCH with {"enabled": true})`);
}

function normalizeDescription(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (value.length > MAX_DESCRIPTION_LENGTH) throw badRequest(`description must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  return value;
}

/** The endpoint without what only the server reads (its sealed secrets). */
export function toEndpoint(endpoint: StoredWebhookEndpoint): WebhookEndpoint {
  const { id, userId, url, description, eventPatterns, enabled, verifiedAt, createdAt, updatedAt } = endpoint;
  return { id, userId, url, description, eventPatterns, enabled, verifiedAt, createdAt, updatedAt };
}
