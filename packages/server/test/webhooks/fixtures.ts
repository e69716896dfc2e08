/** Shared set-up of the webhook tests: fast retry settings, and small helpers over the HTTP API. */
import assert from 'node:assert/strict';
import type { ConfigOverrides } from '../../src/config/index.ts';
import { call, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

/** Receivers run on 127.0.0.1, and retries come within a fraction of a second. */
export const FAST: ConfigOverrides = {
  webhookAllowPrivate: true,
  webhookRetryScheduleMs: [200, 400],
  webhookMaxAttempts: 3,
  webhookTimeoutMs: 2000,
  eventPollIntervalMs: 100,
};

export async function createEndpoint(
  server: TestServer,
  apiKey: string,
  url: string,
  eventPatterns: string[] = ['*'],
): Promise<{ id: string; secret: string; [k: string]: unknown }> {
  const res = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey, json: { url, event_patterns: eventPatterns } });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Records an event for the key's user: creating an API key records `api_key.created`. Returns the new key's id. */
export async function triggerEvent(server: TestServer, apiKey: string, description = 'trigger'): Promise<number> {
  const res = await call(server, 'POST', '/v1/api-keys/', { apiKey, json: { description } });
  assert.equal(res.status, 200, res.text);
  return res.body.id;
}

export async function listDeliveries(server: TestServer, apiKey: string, query = ''): Promise<any[]> {
  const res = await call(server, 'GET', `/v1/webhooks/deliveries${query ? `?${query}` : ''}`, { apiKey });
  assert.equal(res.status, 200, res.text);
  return res.body.items;
}

/** Waits until the endpoint has a delivery in one of `statuses`, and returns it. */
export async function waitForDelivery(server: TestServer, apiKey: string, endpointId: string, statuses: string[], timeoutMs = 5000): Promise<any> {
  return waitUntil(
    `a ${statuses.join('/')} delivery to ${endpointId}`,
    async () => (await listDeliveries(server, apiKey, `endpoint_id=${endpointId}`)).find((d) => statuses.includes(d.status)),
    timeoutMs,
  );
}
