// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Webhook delivery end to end: the real server, real receivers on 127.0.0.1, signatures checked with the
 * `standardwebhooks` package the way a receiver would.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createEndpoint, FAST, listDeliveries, triggerEvent, waitForDelivery } from './fixtures.ts';

describe('webhook delivery', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string };
  let bob: { userId: number; apiKey: string };
  const receivers: Receiver[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };

  before(async () => {
    server = await startTestServer({ config: FAST });
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
  });
  after(async () => {
    await server.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  test('an event reaches the matching endpoints of its user only, signed so that standardwebhooks verifies it', async (t) => {
    const target = await receiver();
    const endpoint = await createEndpoint(server, alice.apiKey, target.url, ['api_key.*']);
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const unmatched = await receiver();
    await createEndpoint(server, alice.apiKey, unmatched.url, ['vm.*', '*.failed']);
    const otherUser = await receiver();
    await createEndpoint(server, bob.apiKey, otherUser.url, ['*']);

    const keyId = await triggerEvent(server, alice.apiKey);
    const [request] = await target.waitForRequests(1);
    const payload = new Webhook(endpoint.secret).verify(request!.body, request!.headers as Record<string, string>) as any;
    assert.equal(payload.type, 'api_key.created');
    assert.equal(payload.data.api_key_id, keyId);
    assert.match(payload.id, /^evt_/);
    assert.equal(request!.headers['webhook-id'], payload.id, 'webhook-id is the event id');
    assert.ok(Math.abs(Number(request!.headers['webhook-timestamp']) * 1000 - Date.now()) < 5000);
    assert.equal(request!.headers['content-type'], 'application/json');
    const latencyMs = request!.wallMs - Date.parse(payload.timestamp);
    t.diagnostic(`commit → receiver latency: ${latencyMs} ms`);
    assert.ok(latencyMs < 1000, `delivered ${latencyMs} ms after the event`);

    const delivery = await waitForDelivery(server, alice.apiKey, endpoint.id, ['succeeded']);
    assert.equal(delivery.event_id, payload.id);
    assert.equal(delivery.event_type, 'api_key.created');
    assert.equal(delivery.event_group, 'api_key');
    assert.equal(delivery.final_http_status, 204);
    assert.equal(delivery.scheduled_attempt, 1);
    assert.equal(delivery.next_retry_at, null);
    assert.ok(delivery.delivered_at);
    assert.equal(delivery.replay_of_delivery_id, null);

    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(unmatched.requests.length, 0, 'patterns vm.* and *.failed do not match api_key.created');
    assert.equal(otherUser.requests.length, 0, "another user's endpoint never gets alice's events");
  });

  test('a receiver that answers 500 gets retries on the schedule until it answers 2xx; the webhook-id stays the same', async (t) => {
    const flaky = await receiver((_request, index) => (index < 2 ? 500 : 200));
    const endpoint = await createEndpoint(server, alice.apiKey, flaky.url, ['api_key.created']);
    await triggerEvent(server, alice.apiKey);

    await flaky.waitForRequests(1);
    const afterFirst = await waitForDelivery(server, alice.apiKey, endpoint.id, ['pending']);
    assert.equal(afterFirst.scheduled_attempt, 2, 'the second attempt is scheduled');
    assert.equal(afterFirst.final_http_status, 500);
    assert.equal(afterFirst.error_message, 'receiver answered HTTP 500');
    assert.ok(Date.parse(afterFirst.next_retry_at) > Date.parse(afterFirst.last_attempt_at));

    const requests = await flaky.waitForRequests(3);
    const ids = new Set(requests.map((r) => r.headers['webhook-id']));
    assert.equal(ids.size, 1, 'one webhook-id across retries: receivers de-duplicate on it');
    assert.equal(new Set(requests.map((r) => r.body)).size, 1, 'the same body every time');
    for (const r of requests) new Webhook(endpoint.secret).verify(r.body, r.headers as Record<string, string>);
    const gaps = [requests[1]!.at - requests[0]!.at, requests[2]!.at - requests[1]!.at];
    t.diagnostic(`retry gaps with schedule 200ms,400ms: ${gaps.map((g) => Math.round(g)).join(' ms, ')} ms`);
    assert.ok(gaps[0]! >= 190 && gaps[1]! >= 390, `gaps follow the schedule: ${gaps}`);

    const done = await waitForDelivery(server, alice.apiKey, endpoint.id, ['succeeded']);
    assert.equal(done.scheduled_attempt, 3);
    assert.equal(done.final_http_status, 200);
    assert.equal(done.error_message, null);
    const detail = await call(server, 'GET', `/v1/webhooks/deliveries/${done.id}`, { apiKey: alice.apiKey });
    assert.equal(detail.status, 200);
    assert.deepEqual(
      detail.body.attempts.map((a: any) => [a.attempt, a.http_status, a.succeeded]),
      [
        [1, 500, false],
        [2, 500, false],
        [3, 200, true],
      ],
    );
    for (const attempt of detail.body.attempts) assert.ok(attempt.duration_ms >= 0 && attempt.started_at);
  });

  test('after the maximum number of attempts the delivery is failed and no more requests come', async () => {
    const broken = await receiver(() => 503);
    const endpoint = await createEndpoint(server, alice.apiKey, broken.url, ['api_key.created']);
    await triggerEvent(server, alice.apiKey);
    const failed = await waitForDelivery(server, alice.apiKey, endpoint.id, ['failed']);
    assert.equal(failed.scheduled_attempt, 3);
    assert.equal(failed.next_retry_at, null);
    assert.equal(failed.delivered_at, null);
    assert.equal(failed.final_http_status, 503);
    assert.match(failed.error_message, /503/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(broken.requests.length, 3);
  });

  test('a redirect is a failed attempt and is not followed', async () => {
    const elsewhere = await receiver();
    const redirecting = await receiver(() => 302);
    const endpoint = await createEndpoint(server, alice.apiKey, redirecting.url, ['api_key.created']);
    const res = await call(server, 'POST', `/v1/webhooks/endpoints/${endpoint.id}/test`, { apiKey: alice.apiKey });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.final_http_status, 302);
    assert.match(res.body.error_message, /redirects are not followed/);
    assert.equal(elsewhere.requests.length, 0);
  });

  test('test sends webhook.test to that endpoint only and answers with the delivery; replay sends the same event again', async () => {
    const target = await receiver();
    const endpoint = await createEndpoint(server, alice.apiKey, target.url, ['*']);
    const bystander = await receiver();
    await createEndpoint(server, alice.apiKey, bystander.url, ['*']);

    const tested = await call(server, 'POST', `/v1/webhooks/endpoints/${endpoint.id}/test`, { apiKey: alice.apiKey });
    assert.equal(tested.status, 200);
    assert.equal(tested.body.event_type, 'webhook.test');
    assert.equal(tested.body.event_group, 'webhook');
    assert.equal(tested.body.status, 'succeeded', 'the answer comes after the first attempt');
    assert.equal(tested.body.endpoint_id, endpoint.id);
    assert.equal(tested.body.user_id, alice.userId);
    const [first] = await target.waitForRequests(1);
    const payload = new Webhook(endpoint.secret).verify(first!.body, first!.headers as Record<string, string>) as any;
    assert.equal(payload.type, 'webhook.test');
    assert.equal(payload.data.endpoint_id, endpoint.id);
    assert.equal(payload.id, tested.body.event_id);

    const replayed = await call(server, 'POST', `/v1/webhooks/deliveries/${tested.body.id}/replay`, { apiKey: alice.apiKey });
    assert.equal(replayed.status, 200);
    assert.notEqual(replayed.body.id, tested.body.id, 'a new delivery');
    assert.equal(replayed.body.replay_of_delivery_id, tested.body.id);
    assert.equal(replayed.body.event_id, tested.body.event_id);
    assert.equal(replayed.body.status, 'succeeded');
    const [, second] = await target.waitForRequests(2);
    assert.equal(second!.headers['webhook-id'], first!.headers['webhook-id']);
    assert.equal(second!.body, first!.body);

    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(bystander.requests.length, 0, "the test event goes to the tested endpoint only, even with pattern '*'");
  });

  test('verify sends a signed challenge and reports whether the receiver accepted (and echoed) it', async () => {
    const echo = await receiver((request) => ({ status: 200, body: JSON.parse(request.body).data.challenge }));
    const endpoint = await createEndpoint(server, alice.apiKey, echo.url);
    const res = await call(server, 'POST', `/v1/webhooks/endpoints/${endpoint.id}/verify`, { apiKey: alice.apiKey });
    assert.equal(res.status, 200);
    assert.deepEqual(
      { ...res.body, duration_ms: 0 },
      { endpoint_id: endpoint.id, verified: true, challenge_echoed: true, http_status: 200, error: null, duration_ms: 0 },
    );
    const payload = new Webhook(endpoint.secret).verify(echo.requests[0]!.body, echo.requests[0]!.headers as Record<string, string>) as any;
    assert.equal(payload.type, 'webhook.verify');
    assert.ok((await call(server, 'GET', `/v1/webhooks/endpoints/${endpoint.id}`, { apiKey: alice.apiKey })).body.verified_at);
    assert.equal((await listDeliveries(server, alice.apiKey, `endpoint_id=${endpoint.id}`)).length, 0, 'verification is not a delivery');

    const refusing = await receiver(() => 401);
    const other = await createEndpoint(server, alice.apiKey, refusing.url);
    const failed = await call(server, 'POST', `/v1/webhooks/endpoints/${other.id}/verify`, { apiKey: alice.apiKey });
    assert.equal(failed.body.verified, false);
    assert.equal(failed.body.http_status, 401);
    assert.match(failed.body.error, /401/);
  });

  test("the deliveries list: newest first, filters, opaque cursor paging, and only the caller's deliveries", async () => {
    const carol = await server.createUserWithKey('carol');
    const a = await receiver();
    const b = await receiver();
    const e1 = await createEndpoint(server, carol.apiKey, a.url, ['api_key.*']);
    const e2 = await createEndpoint(server, carol.apiKey, b.url, ['api_key.*']);
    const keys = [await triggerEvent(server, carol.apiKey), await triggerEvent(server, carol.apiKey), await triggerEvent(server, carol.apiKey)];
    assert.equal((await call(server, 'DELETE', `/v1/api-keys/${keys[0]}`, { apiKey: carol.apiKey })).status, 200);
    await waitUntil('8 succeeded deliveries', async () => (await listDeliveries(server, carol.apiKey, 'status=succeeded&limit=200')).length === 8);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call(server, 'GET', `/v1/webhooks/deliveries?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { apiKey: carol.apiKey });
      assert.equal(res.status, 200);
      assert.ok(res.body.items.length <= 3);
      seen.push(...res.body.items.map((d: any) => d.id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(new Set(seen).size, 8, 'every delivery once');
    const all = await listDeliveries(server, carol.apiKey, 'limit=200');
    assert.deepEqual(
      seen,
      all.map((d) => d.id),
    );
    assert.deepEqual(
      [...all].sort((x, y) => Date.parse(y.created_at) - Date.parse(x.created_at)).map((d) => d.created_at),
      all.map((d) => d.created_at),
      'newest first',
    );

    assert.ok((await listDeliveries(server, carol.apiKey, `endpoint_id=${e1.id}`)).every((d) => d.endpoint_id === e1.id));
    assert.equal((await listDeliveries(server, carol.apiKey, `endpoint_id=${e2.id}`)).length, 4);
    const deleted = await listDeliveries(server, carol.apiKey, 'event_type=api_key.deleted');
    assert.equal(deleted.length, 2);
    assert.equal((await listDeliveries(server, carol.apiKey, 'status=failed')).length, 0);
    assert.equal((await listDeliveries(server, carol.apiKey, `endpoint_id=${e1.id}&event_type=api_key.deleted`)).length, 1);

    assert.equal((await call(server, 'GET', '/v1/webhooks/deliveries?status=bogus', { apiKey: carol.apiKey })).status, 400);
    const badCursor = await call(server, 'GET', '/v1/webhooks/deliveries?cursor=not-a-cursor', { apiKey: carol.apiKey });
    assert.equal(badCursor.status, 400);
    assert.equal(badCursor.body.code, 'BAD_REQUEST');
    assert.equal((await call(server, 'GET', '/v1/webhooks/deliveries?limit=201', { apiKey: carol.apiKey })).status, 422);
    assert.equal((await call(server, 'GET', '/v1/webhooks/deliveries?limit=0', { apiKey: carol.apiKey })).status, 422);

    assert.ok(!(await listDeliveries(server, alice.apiKey, 'limit=200')).some((d) => seen.includes(d.id)), "alice does not see carol's deliveries");
    const othersFilter = await call(server, 'GET', `/v1/webhooks/deliveries?endpoint_id=${e1.id}`, { apiKey: alice.apiKey });
    assert.equal(othersFilter.status, 404, "filtering by carol's endpoint is not found for alice");
  });
});
