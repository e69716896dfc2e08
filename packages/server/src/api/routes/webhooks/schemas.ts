/** Webhook endpoint, delivery, rotation and verification shapes, and the mappings from the core's records. */
import { Type, type Static } from 'typebox';
import { DELIVERY_STATUSES } from '../../../model.ts';
import type { DeliveryAttempt, WebhookDelivery } from '../../../core/webhooks/deliveries.ts';
import { StringEnum } from '../../schemas/common.ts';
import type { CreatedWebhookEndpoint, VerificationResult, WebhookEndpoint } from '../../../core/webhooks/webhook-service.ts';

const DateTime = Type.String({ format: 'date-time' });
const DateTimeOrNull = Type.Union([DateTime, Type.Null()]);
const StringOrNull = Type.Union([Type.String(), Type.Null()]);

const EventPattern = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(\\*|[a-z0-9_]+)(\\.(\\*|[a-z0-9_]+))*$',
  description: 'An event type where * stands for any part: "vm.*", "*.failed", "*"',
});

export const WebhookEndpointRecord = Type.Object(
  {
    id: Type.String({ description: 'we_…' }),
    user_id: Type.Integer(),
    url: Type.String(),
    description: StringOrNull,
    event_patterns: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    verified_at: Type.Union([DateTime, Type.Null()], { description: 'When POST …/verify last got a 2xx answer' }),
    created_at: DateTime,
    updated_at: DateTime,
    secret: Type.Optional(
      Type.String({ description: 'The signing secret (whsec_…, Standard Webhooks): only in the response of the create operation; see rotate-secret' }),
    ),
  },
  { $id: 'WebhookEndpoint', title: 'WebhookEndpoint' },
);

export const WebhookDeliveryRecord = Type.Object(
  {
    id: Type.String({ description: 'wd_…' }),
    endpoint_id: Type.String(),
    user_id: Type.Integer(),
    event_id: Type.Union([Type.String(), Type.Null()], { description: 'The event id: also the webhook-id header, the same on every retry and replay' }),
    event_type: Type.String(),
    event_group: Type.Union([Type.String(), Type.Null()], { description: 'The event family: the part of event_type before the first dot' }),
    status: StringEnum(DELIVERY_STATUSES),
    scheduled_attempt: Type.Integer({ description: 'The attempt due next while pending; the last attempt made once succeeded or failed' }),
    next_retry_at: Type.Union([DateTime, Type.Null()], { description: 'When the scheduled attempt is due; null once final' }),
    last_attempt_at: DateTimeOrNull,
    delivered_at: DateTimeOrNull,
    final_http_status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's status in the last attempt; null when it did not answer" }),
    error_message: StringOrNull,
    replay_of_delivery_id: Type.Union([Type.String(), Type.Null()], { description: 'Set when the delivery replays another delivery' }),
    created_at: DateTime,
    updated_at: DateTime,
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery' },
);

export const WebhookDeliveryList = Type.Object(
  {
    items: Type.Array(Type.Ref('WebhookDelivery')),
    next_cursor: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next (older) page; null on the last page' })),
  },
  { $id: 'WebhookDeliveryList', title: 'WebhookDeliveryList' },
);

export const WebhookSecretRotation = Type.Object(
  {
    endpoint_id: Type.String(),
    secret: Type.String({ description: 'The new signing secret (whsec_…); the old one keeps signing for the grace period' }),
  },
  { $id: 'WebhookSecretRotation', title: 'WebhookSecretRotation' },
);

export const WEBHOOK_SCHEMAS = [WebhookEndpointRecord, WebhookDeliveryRecord, WebhookDeliveryList, WebhookSecretRotation];

export const DeliveryAttemptRecord = Type.Object({
  attempt: Type.Integer(),
  started_at: DateTime,
  duration_ms: Type.Integer(),
  http_status: Type.Union([Type.Integer(), Type.Null()]),
  error: StringOrNull,
  succeeded: Type.Boolean(),
});

export const WebhookDeliveryDetail = Type.Object(
  { ...WebhookDeliveryRecord.properties, attempts: Type.Array(DeliveryAttemptRecord, { description: 'Every attempt made so far, oldest first' }) },
  { title: 'WebhookDeliveryDetail' },
);

export const WebhookVerification = Type.Object({
  endpoint_id: Type.String(),
  verified: Type.Boolean({ description: 'The receiver answered 2xx to the signed webhook.verify challenge' }),
  challenge_echoed: Type.Boolean({ description: "The receiver's answer contained data.challenge" }),
  http_status: Type.Union([Type.Integer(), Type.Null()]),
  error: StringOrNull,
  duration_ms: Type.Integer(),
});

export const EndpointCreateBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that receives the events (POST)' }),
  event_patterns: Type.Optional(Type.Array(EventPattern, { minItems: 1, maxItems: 50, description: 'Default ["*"]: every event' })),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
});

export const EndpointUpdateBody = Type.Partial(EndpointCreateBody);

export const EndpointIdParams = Type.Object({ endpoint_id: Type.String({ minLength: 1, maxLength: 100 }) });
export const DeliveryIdParams = Type.Object({ delivery_id: Type.String({ minLength: 1, maxLength: 100 }) });

export function toEndpointRecord(endpoint: WebhookEndpoint | CreatedWebhookEndpoint): Static<typeof WebhookEndpointRecord> {
  return {
    id: endpoint.id,
    user_id: endpoint.userId,
    url: endpoint.url,
    description: endpoint.description,
    event_patterns: endpoint.eventPatterns,
    enabled: endpoint.enabled,
    verified_at: endpoint.verifiedAt,
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
    ...('secret' in endpoint ? { secret: endpoint.secret } : {}),
  };
}

export function toDeliveryRecord(delivery: WebhookDelivery): Static<typeof WebhookDeliveryRecord> {
  return {
    id: delivery.id,
    endpoint_id: delivery.endpointId,
    user_id: delivery.userId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    event_group: delivery.eventGroup,
    status: delivery.status,
    scheduled_attempt: delivery.scheduledAttempt,
    next_retry_at: delivery.nextRetryAt,
    last_attempt_at: delivery.lastAttemptAt,
    delivered_at: delivery.deliveredAt,
    final_http_status: delivery.finalHttpStatus,
    error_message: delivery.errorMessage,
    replay_of_delivery_id: delivery.replayOfDeliveryId,
    created_at: delivery.createdAt,
    updated_at: delivery.updatedAt,
  };
}

export function toAttemptRecord(attempt: DeliveryAttempt): Static<typeof DeliveryAttemptRecord> {
  return {
    attempt: attempt.attempt,
    started_at: attempt.startedAt,
    duration_ms: attempt.durationMs,
    http_status: attempt.httpStatus,
    error: attempt.error,
    succeeded: attempt.succeeded,
  };
}

export function toVerificationRecord(result: VerificationResult): Static<typeof WebhookVerification> {
  return {
    endpoint_id: result.endpointId,
    verified: result.verified,
    challenge_echoed: result.challengeEchoed,
    http_status: result.httpStatus,
    error: result.error,
    duration_ms: result.durationMs,
  };
}
