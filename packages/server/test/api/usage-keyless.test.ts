// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * The published InstaVM Python client (0.8.4) asks for a session's usage with no credentials at all. sandboxd
 * answers such a request with the usage figures of the session it names and nothing else, unless
 * SANDBOXD_USAGE_REQUIRES_KEY is set; a request with credentials keeps the owner check.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const FIGURES = ['cpu_seconds', 'execution_seconds', 'executions', 'memory_mb', 'session_id', 'vcpu_count', 'vm'];

describe('session usage without credentials', () => {
  let server: TestServer;
  let strict: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let sessionId: string;

  before(async () => {
    server = await startTestServer();
    strict = await startTestServer({ config: { usageRequiresKey: true } });
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
    const created = await call(server, 'POST', '/v1/sessions/session', {
      json: { api_key: alice.apiKey, metadata: { secret: 'do-not-show' }, env: { TOKEN: 'hidden' } },
    });
    sessionId = created.body.session_id;
  });
  after(async () => {
    await server.close();
    await strict.close();
  });

  test('no credentials at all, as the published client sends it: 200 with the usage figures and nothing else', async () => {
    const res = await call(server, 'GET', `/v1/sessions/usage/${sessionId}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), FIGURES);
    assert.equal(res.body.session_id, sessionId);
    assert.equal(res.body.executions, 0);
    assert.equal(res.body.vm, null);
    assert.doesNotMatch(res.text, /do-not-show|hidden|TOKEN|secret|vm_id/);
    const owners = await call(server, 'GET', `/v1/sessions/usage/${sessionId}`, { apiKey: alice.apiKey });
    assert.equal(owners.status, 200);
    for (const key of FIGURES) assert.deepEqual(res.body[key], owners.body[key], key);
    assert.ok('vm_id' in owners.body && 'vm_status' in owners.body, 'the owner also sees the VM fields');
  });

  test('an unknown session is 404 without credentials too', async () => {
    const res = await call(server, 'GET', '/v1/sessions/usage/00000000-0000-4000-8000-000000000000');
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'NOT_FOUND');
  });

  test("with credentials the owner check stays: another user's key gets 404, a bad key 401", async () => {
    const other = await call(server, 'GET', `/v1/sessions/usage/${sessionId}`, { apiKey: bob.apiKey });
    assert.equal(other.status, 404);
    assert.deepEqual(Object.keys(other.body).sort(), ['code', 'detail']);
    const bad = await call(server, 'GET', `/v1/sessions/usage/${sessionId}`, { apiKey: 'sbx_sk_wrong' });
    assert.equal(bad.status, 401);
  });

  test('SANDBOXD_USAGE_REQUIRES_KEY=true: a keyless request is 401', async () => {
    const owner = await strict.createUserWithKey('carol');
    const created = await call(strict, 'POST', '/v1/sessions/session', { apiKey: owner.apiKey, json: {} });
    const res = await call(strict, 'GET', `/v1/sessions/usage/${created.body.session_id}`);
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'NOT_AUTHENTICATED');
    assert.equal((await call(strict, 'GET', `/v1/sessions/usage/${created.body.session_id}`, { apiKey: owner.apiKey })).status, 200);
  });

  test('the document says credentials are optional here, and why', async () => {
    const operation = (await call(server, 'GET', '/openapi.json')).body.paths['/v1/sessions/usage/{session_id}'].get;
    assert.ok(operation.security.some((requirement: object) => Object.keys(requirement).length === 0));
    assert.match(operation.description, /122 random bits/);
    assert.match(operation.description, /SANDBOXD_USAGE_REQUIRES_KEY/);
  });
});
