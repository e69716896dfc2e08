/**
 * What a receiver gets: a Standard Webhooks request (https://www.standardwebhooks.com). The body is
 * `{"id","type","timestamp","data"}`; `webhook-id` is the event id, the same on every retry and replay
 * of that event, so receivers de-duplicate on it; `webhook-timestamp` is the attempt's time in Unix
 * seconds; `webhook-signature` is `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, once per valid
 * secret, space-separated (two during a rotation's grace period).
 */
import { Webhook } from 'standardwebhooks';
import type { EventRecord } from '../events.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { StoredWebhookEndpoint } from '../../model.ts';

export interface WireEvent {
  id: string;
  type: string;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  data: Record<string, unknown>;
}

export const USER_AGENT = 'sandboxd-webhooks/0.1';

export function toWireEvent(event: EventRecord): WireEvent {
  return { id: event.id, type: event.type, timestamp: event.createdAt, data: event.data };
}

/** The secrets that sign now: the current one, and the previous one while its grace period lasts. */
export function signingSecrets(endpoint: StoredWebhookEndpoint, box: SecretBox, now: Date): string[] {
  const secrets = [box.open(endpoint.secretCiphertext, endpoint.id)];
  const previousValid = endpoint.previousSecretExpiresAt !== null && Date.parse(endpoint.previousSecretExpiresAt) > now.getTime();
  if (endpoint.previousSecretCiphertext && previousValid) secrets.push(box.open(endpoint.previousSecretCiphertext, endpoint.id));
  return secrets;
}

/** The headers of one signed attempt. */
export function signedHeaders(secrets: string[], messageId: string, at: Date, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' '),
  };
}
