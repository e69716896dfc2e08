// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * A slow or hostile receiver delays only its own deliveries: attempts run concurrently with a per-endpoint
 * share, each has a hard timeout, and an endless answer is read only up to the cap.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { newDeliveryRow } from '../../src/core/webhooks/deliveries.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { createEndpoint, FAST, listDeliveries, triggerEvent } from './fixtures.ts';

describe('hostile webhook receivers', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string };
  const receivers: Receiver[] = [];

  before(async () => {
    // Two attempts at once, so one per endpoint: the hanging endpoint can hold at most one slot.
    server = await startTestServer({ config: { ...FAST, webhookConcurrency: 2, webhookTimeoutMs: 1500 } });
    alice = await server.createUserWithKey('alice');
  });
  after(async () => {
    await server.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  test('a receiver that never answers does not hold up a healthy endpoint, and its attempt times out', async (t) => {
    const hanging = await startReceiver(() => 'hang');
    const healthy = await startReceiver();
    receivers.push(hanging, healthy);
    const stuck = await createEndpoint(server, alice.apiKey, hanging.url, ['api_key.created']);
    await createEndpoint(server, alice.apiKey, healthy.url, ['api_key.created']);

    const started = performance.now();
    for (let i = 0; i < 3; i++) await triggerEvent(server, alice.apiKey);
    const requests = await healthy.waitForRequests(3, 1400);
    t.diagnostic(`healthy endpoint got 3 deliveries in ${Math.round(requests[2]!.at - started)} ms while the other hangs`);
    assert.ok(requests[2]!.at - started < 1400, 'all three arrived before the hanging attempt timed out');
    assert.equal(hanging.requests.length, 1, 'the hanging endpoint holds one slot, not all of them');

    const timedOut = await waitUntil(
      'the hanging attempt to time out',
      async () => (await listDeliveries(server, alice.apiKey, `endpoint_id=${stuck.id}`)).find((d) => d.error_message),
      4000,
    );
    assert.match(timedOut.error_message, /no complete answer within 1500 ms/);
    assert.equal(timedOut.final_http_status, null);
    assert.equal(timedOut.status, 'pending', 'a timeout is a failed attempt: it is retried');
  });

  test("a backlog of one endpoint's due deliveries does not starve the other endpoints", async () => {
    const [hanging, healthy] = receivers as [Receiver, Receiver];
    const stuck = (await call(server, 'GET', '/v1/webhooks/endpoints', { apiKey: alice.apiKey })).body.find((e: any) => e.url === hanging.url);
    const template = (await listDeliveries(server, alice.apiKey, `endpoint_id=${stuck.id}`))[0];
    // 300 deliveries to the hanging endpoint, all due before anything else (more than one batch of the queue).
    const dueLongAgo = new Date(Date.now() - 60_000).toISOString();
    const db = server.services.database.db;
    await db
      .insertInto('webhook_deliveries')
      .values(
        Array.from({ length: 300 }, (_v, i) => ({
          ...newDeliveryRow({
            endpointId: stuck.id,
            userId: alice.userId,
            event: { id: template.event_id, type: template.event_type, group: template.event_group },
            now: new Date(),
          }),
          delivery_id: `wd_backlog_${i}`,
          next_retry_at: dueLongAgo,
        })),
      )
      .execute();
    const before = healthy.requests.length;
    const started = performance.now();
    await triggerEvent(server, alice.apiKey);
    await healthy.waitForRequests(before + 1, 1000);
    assert.ok(performance.now() - started < 1000);
  });

  test('an endless response body is cut at the cap: the attempt succeeds quickly instead of hanging', async () => {
    const endless = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16 * 1024, 120);
      const pump = () => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const port = (endless.address() as AddressInfo).port;
      const endpoint = await createEndpoint(server, alice.apiKey, `http://127.0.0.1:${port}/hook`, ['webhook.test']);
      const started = performance.now();
      const res = (await (
        await fetch(`${server.baseUrl}/v1/webhooks/endpoints/${endpoint.id}/test`, { method: 'POST', headers: { 'x-api-key': alice.apiKey } })
      ).json()) as { status: string };
      assert.equal(res.status, 'succeeded');
      assert.ok(performance.now() - started < 1000, 'answered long before the 1.5 s timeout');
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });
});
