// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/** The /v1/api-keys/ operations of the spec, with the record fields it lists. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const RECORD_FIELDS = ['id', 'key_prefix', 'user_id', 'status', 'created_at', 'expires_at', 'description'];

describe('API keys', () => {
  let server: TestServer;
  let owner: { userId: number; apiKey: string };

  before(async () => {
    server = await startTestServer();
    owner = await server.createUserWithKey('owner');
  });
  after(() => server.close());

  test('POST creates a key: full_key only here, sbx_sk_ form, key_prefix is its start, and it authenticates', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const res = await call(server, 'POST', '/v1/api-keys/', { apiKey: owner.apiKey, json: { description: 'ci', expires_at: expiresAt } });
    assert.equal(res.status, 200);
    for (const field of RECORD_FIELDS) assert.ok(field in res.body, `record has ${field}`);
    assert.match(res.body.full_key, /^sbx_sk_[A-Za-z0-9_-]{43}$/);
    assert.ok(res.body.full_key.startsWith(res.body.key_prefix));
    assert.equal(res.body.description, 'ci');
    assert.equal(res.body.expires_at, expiresAt);
    assert.equal(res.body.status, 'active');
    assert.equal(res.body.user_id, owner.userId);

    const one = await call(server, 'GET', `/v1/api-keys/${res.body.id}`, { apiKey: res.body.full_key });
    assert.equal(one.status, 200);
    assert.equal(one.body.full_key, undefined, 'the full key is never shown again');
    const list = await call(server, 'GET', '/v1/api-keys/', { apiKey: owner.apiKey });
    assert.ok(list.body.every((k: Record<string, unknown>) => !('full_key' in k)));
  });

  test('POST without a body creates a key too', async () => {
    const res = await call(server, 'POST', '/v1/api-keys/', { apiKey: owner.apiKey });
    assert.equal(res.status, 200);
    assert.equal(res.body.description, null);
    assert.equal(res.body.expires_at, null);
  });

  test('the key is stored only as a hash', async () => {
    const res = await call(server, 'POST', '/v1/api-keys/', { apiKey: owner.apiKey, json: {} });
    const rows = await server.services.database.db.selectFrom('api_keys').selectAll().execute();
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(res.body.full_key), 'no row contains the full key');
    assert.ok(!dump.includes(res.body.full_key.slice(15)), 'no row contains the secret part');
  });

  test('POST with expires_at in the past is refused with 400, and nothing is created', async () => {
    const before = (await call(server, 'GET', '/v1/api-keys/', { apiKey: owner.apiKey })).body.length;
    const res = await call(server, 'POST', '/v1/api-keys/', { apiKey: owner.apiKey, json: { expires_at: '2001-01-01T00:00:00Z' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: owner.apiKey })).body.length, before);
  });

  test('HEAD answers 200 with no body for a valid caller and 401 otherwise', async () => {
    const ok = await call(server, 'HEAD', '/v1/api-keys/', { apiKey: owner.apiKey });
    assert.equal(ok.status, 200);
    assert.equal(ok.text, '');
    assert.equal((await call(server, 'HEAD', '/v1/api-keys/')).status, 401);
  });

  test('PATCH changes only the fields given; null clears', async () => {
    const created = await call(server, 'POST', '/v1/api-keys/', { apiKey: owner.apiKey, json: { description: 'before' } });
    const id = created.body.id;
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const p1 = await call(server, 'PATCH', `/v1/api-keys/${id}`, { apiKey: owner.apiKey, json: { expires_at: later } });
    assert.equal(p1.status, 200);
    assert.equal(p1.body.description, 'before');
    assert.equal(p1.body.expires_at, later);
    const p2 = await call(server, 'PATCH', `/v1/api-keys/${id}`, { apiKey: owner.apiKey, json: { description: null } });
    assert.equal(p2.body.description, null);
    assert.equal(p2.body.expires_at, later);
  });

  test('DELETE removes the key from the list and GET answers 404 afterwards', async () => {
    const created = await call(server, 'POST', '/v1/api-keys/', { apiKey: owner.apiKey, json: {} });
    const del = await call(server, 'DELETE', `/v1/api-keys/${created.body.id}`, { apiKey: owner.apiKey });
    assert.equal(del.status, 200);
    assert.equal(del.body.id, created.body.id);
    assert.equal((await call(server, 'GET', `/v1/api-keys/${created.body.id}`, { apiKey: owner.apiKey })).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/api-keys/${created.body.id}`, { apiKey: owner.apiKey })).status, 404);
    const list = await call(server, 'GET', '/v1/api-keys/', { apiKey: owner.apiKey });
    assert.ok(!list.body.some((k: { id: number }) => k.id === created.body.id));
  });

  test('paths work with and without the trailing slash', async () => {
    assert.equal((await call(server, 'GET', '/v1/api-keys', { apiKey: owner.apiKey })).status, 200);
  });
});
