// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Webhook endpoints as a resource: create (the only place the secret appears, besides rotation), list,
 * get, update, delete; the secret is encrypted at rest; another user's ids are 404 everywhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { createEndpoint, FAST } from './fixtures.ts';

describe('webhook endpoints', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string };
  let bob: { userId: number; apiKey: string };

  before(async () => {
    server = await startTestServer({ config: FAST });
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
  });
  after(() => server.close());

  test('create returns the endpoint and its secret once; list and get never show the secret', async () => {
    const res = await call(server, 'POST', '/v1/webhooks/endpoints', {
      apiKey: alice.apiKey,
      json: { url: 'https://hooks.example.com/sandboxd', event_patterns: ['vm.*', '*.failed', 'vm.*'], description: 'ops' },
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.id, /^we_[0-9a-f]{24}$/);
    assert.match(res.body.secret, /^whsec_/);
    assert.deepEqual(res.body.event_patterns, ['vm.*', '*.failed'], 'duplicates dropped, order kept');
    assert.equal(res.body.enabled, true);
    assert.equal(res.body.user_id, alice.userId);
    assert.equal(res.body.description, 'ops');
    assert.equal(res.body.verified_at, null);

    const one = await call(server, 'GET', `/v1/webhooks/endpoints/${res.body.id}`, { apiKey: alice.apiKey });
    assert.equal(one.status, 200);
    assert.equal(one.body.secret, undefined);
    const list = await call(server, 'GET', '/v1/webhooks/endpoints', { apiKey: alice.apiKey });
    assert.ok(list.body.some((e: any) => e.id === res.body.id));
    assert.ok(list.body.every((e: any) => !('secret' in e)));
  });

  test('event_patterns default to every event; bad patterns and URLs are refused', async () => {
    const res = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey: alice.apiKey, json: { url: 'http://hooks.example.com/' } });
    assert.deepEqual(res.body.event_patterns, ['*']);
    for (const event_patterns of [[], ['VM.*'], ['vm..started'], ['vm*']]) {
      const bad = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey: alice.apiKey, json: { url: 'http://hooks.example.com/', event_patterns } });
      assert.equal(bad.status, 422, JSON.stringify(event_patterns));
    }
    const scheme = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey: alice.apiKey, json: { url: 'ftp://hooks.example.com/' } });
    assert.equal(scheme.status, 400);
    assert.equal(scheme.body.code, 'WEBHOOK_URL_NOT_ALLOWED');
    const notUrl = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey: alice.apiKey, json: { url: 'hooks.example.com' } });
    assert.equal(notUrl.body.code, 'WEBHOOK_URL_NOT_ALLOWED');
  });

  test('PATCH changes only the given fields; DELETE removes the endpoint', async () => {
    const created = await createEndpoint(server, alice.apiKey, 'https://a.example.com/hook', ['vm.*']);
    const patched = await call(server, 'PATCH', `/v1/webhooks/endpoints/${created.id}`, {
      apiKey: alice.apiKey,
      json: { enabled: false, description: 'paused' },
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.enabled, false);
    assert.equal(patched.body.description, 'paused');
    assert.deepEqual(patched.body.event_patterns, ['vm.*']);
    assert.equal(patched.body.url, 'https://a.example.com/hook');
    const tested = await call(server, 'POST', `/v1/webhooks/endpoints/${created.id}/test`, { apiKey: alice.apiKey });
    assert.equal(tested.status, 409, 'a disabled endpoint cannot be tested');

    const del = await call(server, 'DELETE', `/v1/webhooks/endpoints/${created.id}`, { apiKey: alice.apiKey });
    assert.equal(del.status, 200);
    assert.equal(del.body.deleted, true);
    assert.equal((await call(server, 'GET', `/v1/webhooks/endpoints/${created.id}`, { apiKey: alice.apiKey })).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/webhooks/endpoints/${created.id}`, { apiKey: alice.apiKey })).status, 404);
    const list = await call(server, 'GET', '/v1/webhooks/endpoints', { apiKey: alice.apiKey });
    assert.ok(!list.body.some((e: any) => e.id === created.id));
  });

  test('the secret is stored encrypted: no row of the store contains it', async () => {
    const created = await createEndpoint(server, alice.apiKey, 'https://b.example.com/hook');
    const rotated = await call(server, 'POST', `/v1/webhooks/endpoints/${created.id}/rotate-secret`, { apiKey: alice.apiKey });
    const rows = JSON.stringify(await server.services.database.db.selectFrom('webhook_endpoints').selectAll().execute());
    for (const secret of [created.secret, rotated.body.secret]) {
      assert.ok(!rows.includes(secret.slice('whsec_'.length, 30)), 'no part of the secret in the store');
    }
    assert.match(rows, /"secret_ciphertext":"v1\./);
  });

  test("another user's endpoint and delivery ids answer 404 on every operation", async () => {
    const bobs = await createEndpoint(server, bob.apiKey, 'https://bob.example.com/hook');
    const ops: [string, string, unknown?][] = [
      ['GET', `/v1/webhooks/endpoints/${bobs.id}`],
      ['PATCH', `/v1/webhooks/endpoints/${bobs.id}`, { description: 'mine' }],
      ['DELETE', `/v1/webhooks/endpoints/${bobs.id}`],
      ['POST', `/v1/webhooks/endpoints/${bobs.id}/rotate-secret`],
      ['POST', `/v1/webhooks/endpoints/${bobs.id}/test`],
      ['POST', `/v1/webhooks/endpoints/${bobs.id}/verify`],
    ];
    for (const [method, url, json] of ops) {
      const res = await call(server, method, url, { apiKey: alice.apiKey, ...(json ? { json } : {}) });
      assert.equal(res.status, 404, `${method} ${url}`);
      assert.equal(res.body.code, 'NOT_FOUND');
    }
    // A delivery of bob's (to an unreachable public name: it fails, which is fine here).
    await call(server, 'PATCH', `/v1/webhooks/endpoints/${bobs.id}`, { apiKey: bob.apiKey, json: { url: 'http://127.0.0.1:9/hook' } });
    const bobsDelivery = (await call(server, 'POST', `/v1/webhooks/endpoints/${bobs.id}/test`, { apiKey: bob.apiKey })).body;
    assert.match(bobsDelivery.id, /^wd_/);
    assert.equal((await call(server, 'GET', `/v1/webhooks/deliveries/${bobsDelivery.id}`, { apiKey: alice.apiKey })).status, 404);
    assert.equal((await call(server, 'POST', `/v1/webhooks/deliveries/${bobsDelivery.id}/replay`, { apiKey: alice.apiKey })).status, 404);
    assert.equal((await call(server, 'GET', `/v1/webhooks/deliveries/${bobsDelivery.id}`, { apiKey: bob.apiKey })).status, 200);
    const stillBobs = await call(server, 'GET', `/v1/webhooks/endpoints/${bobs.id}`, { apiKey: bob.apiKey });
    assert.equal(stillBobs.body.description, null);
  });

  test('every operation requires credentials', async () => {
    for (const [method, url] of [
      ['GET', '/v1/webhooks/endpoints'],
      ['POST', '/v1/webhooks/endpoints'],
      ['GET', '/v1/webhooks/deliveries'],
      ['POST', '/v1/webhooks/endpoints/we_x/test'],
      ['GET', '/v1/audit/events'],
      ['GET', '/v1/events/stream'],
    ] as const) {
      assert.equal((await call(server, method, url)).status, 401, `${method} ${url}`);
    }
  });
});
