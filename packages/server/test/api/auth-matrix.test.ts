// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Who gets in: every way a credential can be presented, and every way it can be wrong. Runs over HTTP
 * against the real app.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { readSetting } from '../../src/store/settings-store.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('authentication matrix', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string; password: string };
  let bob: { userId: number; apiKey: string; password: string };

  before(async () => {
    server = await startTestServer();
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
  });
  after(() => server.close());

  const assert401 = (res: { status: number; headers: Headers; body: any }, code: string) => {
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    assert.equal(res.body.code, code);
    assert.equal(typeof res.body.detail, 'string');
  };

  test('no credentials: 401 NOT_AUTHENTICATED with WWW-Authenticate', async () => {
    assert401(await call(server, 'GET', '/v1/api-keys/'), 'NOT_AUTHENTICATED');
  });

  test('unknown key in X-API-Key, in Bearer and in the api_key field: 401 INVALID_CREDENTIALS', async () => {
    const fake = 'sbx_sk_' + 'A'.repeat(43);
    assert401(await call(server, 'GET', '/v1/api-keys/', { apiKey: fake }), 'INVALID_CREDENTIALS');
    assert401(await call(server, 'GET', '/v1/api-keys/', { bearer: fake }), 'INVALID_CREDENTIALS');
    assert401(await call(server, 'POST', '/v1/sessions/session', { json: { api_key: fake } }), 'INVALID_CREDENTIALS');
    assert401(await call(server, 'GET', '/v1/api-keys/', { apiKey: 'garbage' }), 'INVALID_CREDENTIALS');
  });

  test('a valid key works as X-API-Key, as Bearer, and as the api_key body field of the operations that have one', async () => {
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey })).status, 200);
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { bearer: alice.apiKey })).status, 200);
    const viaBody = await call(server, 'POST', '/v1/sessions/session', { json: { api_key: alice.apiKey, metadata: { via: 'body' } } });
    assert.equal(viaBody.status, 200);
    const info = await call(server, 'GET', `/v1/sessions/session/${viaBody.body.session_id}`, { apiKey: alice.apiKey });
    assert.equal(info.status, 200, "the session is alice's");
  });

  test('X-API-Key wins over a bad bearer token, and a bad X-API-Key is not rescued by a good bearer', async () => {
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey, bearer: 'junk' })).status, 200);
    assert401(await call(server, 'GET', '/v1/api-keys/', { apiKey: 'sbx_sk_wrong', bearer: alice.apiKey }), 'INVALID_CREDENTIALS');
  });

  test('password flow: form sign-in issues a bearer token that authenticates; wrong password is 401', async () => {
    const token = await call(server, 'POST', '/v1/auth/token', { form: { username: 'alice', password: alice.password, grant_type: 'password' } });
    assert.equal(token.status, 200);
    assert.equal(token.body.token_type, 'bearer');
    assert.ok(token.body.expires_in > 0);
    const list = await call(server, 'GET', '/v1/api-keys/', { bearer: token.body.access_token });
    assert.equal(list.status, 200);
    assert.ok(list.body.every((k: { user_id: number }) => k.user_id === alice.userId));

    assert401(await call(server, 'POST', '/v1/auth/token', { form: { username: 'alice', password: 'wrong-password' } }), 'INVALID_CREDENTIALS');
    assert401(await call(server, 'POST', '/v1/auth/token', { form: { username: 'nobody', password: 'whatever-pw' } }), 'INVALID_CREDENTIALS');
    assert401(await call(server, 'GET', '/v1/api-keys/', { bearer: token.body.access_token.slice(0, -2) + 'xx' }), 'INVALID_CREDENTIALS');
  });

  test('a bearer token that is expired, or signed with another secret, is refused', async () => {
    const secret = new TextEncoder().encode((await readSetting(server.services.database.db, 'auth.token_secret'))!);
    const now = Math.floor(Date.now() / 1000);
    const sign = (key: Uint8Array, expiresAt: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(String(alice.userId))
        .setIssuer('sandboxd')
        .setAudience('sandboxd-api')
        .setIssuedAt(now - 7200)
        .setExpirationTime(expiresAt)
        .sign(key);
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { bearer: await sign(secret, now + 600) })).status, 200, 'control: a fresh token works');
    assert401(await call(server, 'GET', '/v1/api-keys/', { bearer: await sign(secret, now - 3600) }), 'INVALID_CREDENTIALS');
    assert401(await call(server, 'GET', '/v1/api-keys/', { bearer: await sign(new TextEncoder().encode('y'.repeat(48)), now + 600) }), 'INVALID_CREDENTIALS');
  });

  test('an expired key stops working at once (PATCH expires_at into the past)', async () => {
    const created = await call(server, 'POST', '/v1/api-keys/', { apiKey: alice.apiKey, json: { description: 'short-lived' } });
    const key = created.body.full_key as string;
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: key })).status, 200);
    const patched = await call(server, 'PATCH', `/v1/api-keys/${created.body.id}`, { apiKey: alice.apiKey, json: { expires_at: '2000-01-01T00:00:00Z' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.status, 'expired');
    const refused = await call(server, 'GET', '/v1/api-keys/', { apiKey: key });
    assert401(refused, 'INVALID_CREDENTIALS');
    assert.match(refused.body.detail, /expired/);
  });

  test('a key past its expiry time stops working without any change', async () => {
    const created = await call(server, 'POST', '/v1/api-keys/', { apiKey: alice.apiKey, json: { expires_at: new Date(Date.now() + 1500).toISOString() } });
    assert.equal(created.status, 200);
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: created.body.full_key })).status, 200);
    await new Promise((r) => setTimeout(r, 1700));
    assert401(await call(server, 'GET', '/v1/api-keys/', { apiKey: created.body.full_key }), 'INVALID_CREDENTIALS');
  });

  test('a deleted key stops working at once', async () => {
    const created = await call(server, 'POST', '/v1/api-keys/', { apiKey: alice.apiKey, json: {} });
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: created.body.full_key })).status, 200);
    assert.equal((await call(server, 'DELETE', `/v1/api-keys/${created.body.id}`, { apiKey: alice.apiKey })).status, 200);
    assert401(await call(server, 'GET', '/v1/api-keys/', { apiKey: created.body.full_key }), 'INVALID_CREDENTIALS');
  });

  test("another user's key: 404 on get, patch and delete, and it keeps working", async () => {
    const bobsKeys = await call(server, 'GET', '/v1/api-keys/', { apiKey: bob.apiKey });
    const bobsKeyId = bobsKeys.body[0].id as number;
    for (const [method, json] of [
      ['GET', undefined],
      ['PATCH', { description: 'mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(server, method, `/v1/api-keys/${bobsKeyId}`, { apiKey: alice.apiKey, ...(json ? { json } : {}) });
      assert.equal(res.status, 404, `${method} of another user's key`);
      assert.equal(res.body.code, 'NOT_FOUND');
    }
    const aliceList = await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey });
    assert.ok(!aliceList.body.some((k: { id: number }) => k.id === bobsKeyId), "alice's list must not contain bob's key");
    const stillBobs = await call(server, 'GET', `/v1/api-keys/${bobsKeyId}`, { apiKey: bob.apiKey });
    assert.equal(stillBobs.status, 200);
    assert.equal(stillBobs.body.description, 'test key of bob');
  });

  test('computer use requires credentials, and a session that does not exist is 404', async () => {
    const url = '/v1/computeruse/00000000-0000-4000-8000-000000000000/viewer-url';
    assert401(await call(server, 'GET', url), 'NOT_AUTHENTICATED');
    assert401(
      await call(server, 'POST', '/v1/computeruse/00000000-0000-4000-8000-000000000000/action', { json: { action: 'screenshot' } }),
      'NOT_AUTHENTICATED',
    );
    const res = await call(server, 'GET', url, { apiKey: alice.apiKey });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'NOT_FOUND');
  });
});
