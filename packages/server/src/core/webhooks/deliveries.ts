/**
 * Webhook delivery records. A delivery is one event on its way to one endpoint:
 *
 *   pending ──claim──▶ delivering ──2xx──▶ succeeded
 *      ▲                   │
 *      └──── not 2xx, ─────┤
 *        attempts left     └── not 2xx, no attempts left (or endpoint gone) ──▶ failed
 *
 * `scheduled_attempt` is the attempt due next while pending, and the last one made once final.
 */
import { randomBytes } from 'node:crypto';
import { DELIVERY_STATUSES, type DeliveryAttempt, type DeliveryStatus } from '../../model.ts';
import type { NewWebhookDeliveryRow, WebhookDeliveryRow } from '../../store/schema.ts';

export { DELIVERY_STATUSES, type DeliveryAttempt, type DeliveryStatus };

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  userId: number;
  eventId: string;
  eventType: string;
  eventGroup: string;
  status: DeliveryStatus;
  scheduledAttempt: number;
  nextRetryAt: string | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  finalHttpStatus: number | null;
  errorMessage: string | null;
  replayOfDeliveryId: string | null;
  createdAt: string;
  updatedAt: string;
}

export function newDeliveryId(): string {
  return `wd_${randomBytes(12).toString('hex')}`;
}

/** A delivery of an event to an endpoint, due at once. */
export function newDeliveryRow(input: {
  endpointId: string;
  userId: number;
  event: { id: string; type: string; group: string };
  now: Date;
  replayOf?: string | null;
}): NewWebhookDeliveryRow {
  const now = input.now.toISOString();
  return {
    delivery_id: newDeliveryId(),
    endpoint_id: input.endpointId,
    user_id: input.userId,
    event_id: input.event.id,
    event_type: input.event.type,
    event_group: input.event.group,
    status: 'pending',
    scheduled_attempt: 1,
    next_retry_at: now,
    last_attempt_at: null,
    delivered_at: null,
    final_http_status: null,
    error_message: null,
    replay_of_delivery_id: input.replayOf ?? null,
    lease_until: null,
    lease_owner: null,
    created_at: now,
    updated_at: now,
  };
}

export function toDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: row.delivery_id,
    endpointId: row.endpoint_id,
    userId: row.user_id,
    eventId: row.event_id,
    eventType: row.event_type,
    eventGroup: row.event_group,
    status: row.status,
    scheduledAttempt: row.scheduled_attempt,
    nextRetryAt: row.next_retry_at,
    lastAttemptAt: row.last_attempt_at,
    deliveredAt: row.delivered_at,
    finalHttpStatus: row.final_http_status,
    errorMessage: row.error_message,
    replayOfDeliveryId: row.replay_of_delivery_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
