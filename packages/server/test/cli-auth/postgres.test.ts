// test-lane: light (a private PostgreSQL server of its own, on a port of its own; its server boots no VM: helpers/test-server.ts fails the file if one does)
/**
 * The command-line login on PostgreSQL: the same flow, and one key from racing exchanges. Also the sign-in
 * pieces beside it that keep state in the store (console sessions, sign-in failures), on PostgreSQL's SQL.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('command-line login on PostgreSQL', () => {
  let postgres: PostgresServer;
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    postgres = await startPostgres();
    server = await startTestServer({ config: { databaseUrl: postgres.url, cliAuthIntervalSeconds: 1, signInMaxFailuresPerUsername: 2 } });
    apiKey = (await server.createUserWithKey('pat')).apiKey;
  });
  after(async () => {
    await server?.close();
    await postgres?.stop();
  });

  test('start, pending, approve, one key out of four racing exchanges, replay refused', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const started = await call(server, 'POST', '/api/cli-auth/start', {
      json: { hostname: 'pg-host', code_challenge: createHash('sha256').update(verifier).digest('base64url') },
    });
    assert.equal(started.status, 200, started.text);
    const exchange = () => call(server, 'POST', '/api/cli-auth/exchange', { json: { device_code: started.body.device_code, code_verifier: verifier } });
    assert.equal((await exchange()).body.code, 'CLI_AUTH_PENDING');
    assert.equal((await call(server, 'POST', '/api/cli-auth/approve', { apiKey, json: { user_code: started.body.user_code } })).status, 200);
    const answers = await Promise.all([1, 2, 3, 4].map(() => exchange()));
    const keys = answers.filter((a) => a.status === 200);
    assert.equal(keys.length, 1, JSON.stringify(answers.map((a) => a.body)));
    assert.equal(keys[0]!.body.description, 'CLI - pg-host');
    assert.ok(answers.filter((a) => a.status === 400).every((a) => a.body.code === 'CLI_AUTH_ALREADY_USED'));
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: keys[0]!.body.api_key })).status, 200);
  });

  test('console sessions and sign-in throttling keep their state in PostgreSQL', async () => {
    const quinn = await server.createUserWithKey('quinn');
    const cookieOf = (res: Awaited<ReturnType<typeof call>>) =>
      res.headers
        .getSetCookie()
        .map((l) => l.split(';')[0])
        .join('; ');
    const byPassword = await call(server, 'POST', '/v1/auth/session', { json: { username: 'quinn', password: quinn.password } });
    assert.equal(byPassword.status, 200, byPassword.text);
    const byKey = await call(server, 'POST', '/v1/auth/session', { json: { api_key: quinn.apiKey } });
    assert.equal((await call(server, 'GET', '/v1/auth/session', { headers: { cookie: cookieOf(byKey) } })).status, 200);
    assert.equal((await call(server, 'DELETE', '/v1/auth/session', { headers: { cookie: cookieOf(byPassword) } })).status, 204);
    assert.equal((await call(server, 'GET', '/v1/auth/session', { headers: { cookie: cookieOf(byPassword) } })).status, 401);
    const keys = await call(server, 'GET', '/v1/api-keys/', { apiKey: quinn.apiKey });
    assert.equal((await call(server, 'DELETE', `/v1/api-keys/${keys.body[0].id}`, { apiKey: quinn.apiKey })).status, 200);
    assert.equal((await call(server, 'GET', '/v1/auth/session', { headers: { cookie: cookieOf(byKey) } })).status, 401);

    for (const password of ['wrong-one', 'wrong-two'])
      assert.equal((await call(server, 'POST', '/v1/auth/token', { form: { username: 'quinn', password } })).status, 401);
    const locked = await call(server, 'POST', '/v1/auth/token', { form: { username: 'quinn', password: quinn.password } });
    assert.equal(locked.status, 429, locked.text);
    assert.ok(Number(locked.headers.get('retry-after')) > 0);
  });
});
