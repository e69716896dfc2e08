/** The command-line login on PostgreSQL: the same flow, and one key from racing exchanges. */
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
    server = await startTestServer({ config: { databaseUrl: postgres.url, cliAuthIntervalSeconds: 1 } });
    apiKey = (await server.createUserWithKey('pat')).apiKey;
  });
  after(async () => {
    await server?.close();
    await postgres?.stop();
  });

  test('start, pending, approve, one key out of four racing exchanges, replay refused', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const started = await call(server, 'POST', '/api/cli-auth/start', { json: { hostname: 'pg-host', code_challenge: createHash('sha256').update(verifier).digest('base64url') } });
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
});
