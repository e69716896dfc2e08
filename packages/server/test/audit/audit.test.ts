// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * The audit log over HTTP: sign-ins (and failed ones), API key and webhook endpoint changes, with actor,
 * source address and user agent; users read their own entries, administrators everyone's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { FAST } from '../webhooks/fixtures.ts';

describe('audit log', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string; password: string };
  let bob: { userId: number; apiKey: string; password: string };
  let root: { userId: number; apiKey: string };
  let aliceKeyId: number;

  const entries = async (apiKey: string, query = '') => {
    const res = await call(server, 'GET', `/v1/audit/events${query ? `?${query}` : ''}`, { apiKey });
    assert.equal(res.status, 200, res.text);
    return res.body.items as any[];
  };

  before(async () => {
    server = await startTestServer({ config: FAST });
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
    const admin = await server.services.users.create({ username: 'root', password: 'root-password-long', isAdmin: true });
    root = { userId: admin.id, apiKey: (await server.services.apiKeys.create(admin.id, {})).fullKey };
    aliceKeyId = (await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey })).body[0].id;
  });
  after(() => server.close());

  test('sign-ins are recorded with the source address and user agent; failures too', async () => {
    const headers = { 'user-agent': 'audit-test/1.0' };
    assert.equal((await call(server, 'POST', '/v1/auth/token', { form: { username: 'alice', password: alice.password }, headers })).status, 200);
    assert.equal((await call(server, 'POST', '/v1/auth/token', { form: { username: 'alice', password: 'wrong-password' }, headers })).status, 401);
    assert.equal((await call(server, 'POST', '/v1/auth/token', { form: { username: 'mallory', password: 'guess-guess' }, headers })).status, 401);

    const mine = await entries(alice.apiKey, 'action=auth.sign_in');
    assert.equal(mine.length, 2);
    const [failure, success] = mine; // newest first
    assert.deepEqual(
      {
        action: success.action,
        outcome: success.outcome,
        user_id: success.user_id,
        username: success.username,
        via: success.via,
        source_ip: success.source_ip,
        user_agent: success.user_agent,
      },
      {
        action: 'auth.sign_in',
        outcome: 'success',
        user_id: alice.userId,
        username: 'alice',
        via: 'password',
        source_ip: '127.0.0.1',
        user_agent: 'audit-test/1.0',
      },
    );
    assert.equal(failure.outcome, 'failure');
    assert.equal(failure.user_id, alice.userId, "a failed sign-in to an existing account is its owner's to see");
    assert.deepEqual(failure.detail, { reason: 'wrong_password' });
    assert.ok(!Number.isNaN(Date.parse(failure.created_at)));

    const unknown = (await entries(root.apiKey, 'status=failure')).find((e) => e.username === 'mallory');
    assert.ok(unknown, 'the administrator sees the failed sign-in of an unknown user');
    assert.equal(unknown.user_id, null);
    assert.deepEqual(unknown.detail, { reason: 'unknown_username' });
  });

  test('API key creation and deletion are recorded with the key that did it', async () => {
    const created = await call(server, 'POST', '/v1/api-keys/', { apiKey: alice.apiKey, json: { description: 'audited' } });
    assert.equal((await call(server, 'DELETE', `/v1/api-keys/${created.body.id}`, { apiKey: alice.apiKey })).status, 200);
    const [deleted] = await entries(alice.apiKey, 'action=api_key.delete');
    const creations = await entries(alice.apiKey, 'action=api_key.create');
    const creation = creations.find((e) => e.target_id === String(created.body.id));
    for (const entry of [creation, deleted]) {
      assert.equal(entry.outcome, 'success');
      assert.equal(entry.via, 'api_key');
      assert.equal(entry.api_key_id, aliceKeyId);
      assert.equal(entry.target_type, 'api_key');
      assert.equal(entry.target_id, String(created.body.id));
      assert.equal(entry.detail.key_prefix, created.body.key_prefix);
    }
  });

  test('webhook endpoint creation, secret rotation and deletion are recorded', async () => {
    const endpoint = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey: bob.apiKey, json: { url: 'https://hooks.example.com/bob' } });
    await call(server, 'POST', `/v1/webhooks/endpoints/${endpoint.body.id}/rotate-secret`, { apiKey: bob.apiKey });
    await call(server, 'DELETE', `/v1/webhooks/endpoints/${endpoint.body.id}`, { apiKey: bob.apiKey });
    const actions = (await entries(bob.apiKey)).filter((e) => e.target_id === endpoint.body.id).map((e) => e.action);
    assert.deepEqual(actions, ['webhook_endpoint.delete', 'webhook_endpoint.rotate_secret', 'webhook_endpoint.create']);
    const dump = JSON.stringify(await entries(bob.apiKey));
    assert.ok(!dump.includes(endpoint.body.secret), 'secrets never reach the audit log');
  });

  test("users see only their own entries; administrators see everyone's", async () => {
    assert.ok((await entries(alice.apiKey)).every((e) => e.user_id === alice.userId));
    assert.ok((await entries(bob.apiKey)).every((e) => e.user_id === bob.userId));
    const all = await entries(root.apiKey, 'limit=500');
    const users = new Set(all.map((e) => e.user_id));
    for (const id of [alice.userId, bob.userId, null]) assert.ok(users.has(id), `admin sees entries of ${id}`);
  });

  test('status filters by outcome; limit and cursor page newest first', async () => {
    assert.ok((await entries(root.apiKey, 'status=failure')).every((e) => e.outcome === 'failure'));
    assert.ok((await entries(root.apiKey, 'status=success')).every((e) => e.outcome === 'success'));
    assert.equal((await call(server, 'GET', '/v1/audit/events?status=maybe', { apiKey: root.apiKey })).status, 400);
    assert.equal((await call(server, 'GET', '/v1/audit/events?limit=501', { apiKey: root.apiKey })).status, 422);

    const all = await entries(root.apiKey, 'limit=500');
    const paged: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await call(server, 'GET', `/v1/audit/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { apiKey: root.apiKey });
      paged.push(...res.body.items.map((e: any) => e.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    assert.deepEqual(
      paged,
      all.map((e) => e.id),
    );
    assert.deepEqual(
      paged,
      [...paged].sort((a, b) => b - a),
      'newest first',
    );
  });
});
