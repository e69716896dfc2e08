// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * At-least-once across restarts and crashes: the deliveries table is the queue, so stopping the server
 * with a delivery pending loses nothing, and a lease left by a dead node is taken over once it expires
 * (and not before).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../helpers/ports.ts';
import { call, startTestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';
import { createEndpoint, FAST, triggerEvent, waitForDelivery } from './fixtures.ts';

const CONFIG = { ...FAST, webhookRetryScheduleMs: [300], webhookMaxAttempts: 50 };

test('a delivery pending when the server stops is sent by the next server on the same store', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-restart-'));
  const port = await freePort();
  const first = await startTestServer({ dataDir, config: CONFIG });
  let second: Awaited<ReturnType<typeof startTestServer>> | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  try {
    const alice = await first.createUserWithKey('alice');
    const endpoint = await createEndpoint(first, alice.apiKey, `http://127.0.0.1:${port}/hook`, ['api_key.created']);
    const keyId = await triggerEvent(first, alice.apiKey);
    // The receiver is down: the first attempt fails and a retry is scheduled.
    const pending = await waitUntil('a failed first attempt', async () => {
      const delivery = await waitForDelivery(first, alice.apiKey, endpoint.id, ['pending']);
      return delivery.scheduled_attempt >= 2 ? delivery : undefined;
    });
    assert.match(pending.error_message, /connection refused/);
    await first.close();

    receiver = await startReceiver(() => 200, port);
    const restartedAt = performance.now();
    second = await startTestServer({ dataDir, config: CONFIG });
    const [request] = await receiver.waitForRequests(1);
    t.diagnostic(`delivered ${Math.round(request!.at - restartedAt)} ms after the restart`);
    const payload = new Webhook(endpoint.secret).verify(request!.body, request!.headers as Record<string, string>) as any;
    assert.equal(payload.data.api_key_id, keyId);
    assert.equal(request!.headers['webhook-id'], pending.event_id, 'the same webhook-id as before the restart');

    const done = await waitForDelivery(second, alice.apiKey, endpoint.id, ['succeeded']);
    assert.equal(done.id, pending.id, 'the same delivery, resumed');
    const detail = await call(second, 'GET', `/v1/webhooks/deliveries/${done.id}`, { apiKey: alice.apiKey });
    const attempts = detail.body.attempts as any[];
    assert.ok(attempts.length >= 2);
    assert.equal(attempts.at(-1).http_status, 200);
    assert.ok(attempts.slice(0, -1).every((a) => a.http_status === null && /connection refused/.test(a.error)));
    assert.deepEqual(
      attempts.map((a) => a.attempt),
      attempts.map((_a, i) => i + 1),
    );
  } finally {
    await second?.close();
    await receiver?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a delivery leased by a node that died is resumed once the lease expires, never while it holds', async () => {
  const server = await startTestServer({ config: CONFIG });
  const receiver = await startReceiver();
  try {
    const alice = await server.createUserWithKey('alice');
    const endpoint = await createEndpoint(server, alice.apiKey, receiver.url, ['webhook.test']);
    const delivery = (await call(server, 'POST', `/v1/webhooks/endpoints/${endpoint.id}/test`, { apiKey: alice.apiKey })).body;
    assert.equal(delivery.status, 'succeeded');
    assert.equal(receiver.requests.length, 1);

    // Another node claimed a send of it and is still within its lease: this node must leave it alone.
    const db = server.services.database.db;
    const claimedBy = (leaseUntil: Date) =>
      db
        .updateTable('webhook_deliveries')
        .set({
          status: 'delivering',
          scheduled_attempt: 2,
          next_retry_at: new Date().toISOString(),
          lease_owner: 'other-node',
          lease_until: leaseUntil.toISOString(),
        })
        .where('delivery_id', '=', delivery.id)
        .execute();
    await claimedBy(new Date(Date.now() + 60_000));
    server.services.webhookDispatcher.wake();
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(receiver.requests.length, 1, 'a live lease is respected');

    // That node died: its lease runs out and this node sends the attempt again.
    await claimedBy(new Date(Date.now() - 1));
    server.services.webhookDispatcher.wake();
    await receiver.waitForRequests(2);
    const resumed = await waitForDelivery(server, alice.apiKey, endpoint.id, ['succeeded']);
    assert.equal(resumed.scheduled_attempt, 2);
  } finally {
    await server.close();
    await receiver.close();
  }
});
