// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * `client.vaults` against the real server (no VM needed): create with a secret, list, get, update, set and
 * delete a secret, an empty request log, delete; no answer ever carries a secret's value; another user sees
 * none of it; `vaultIds` reaches session creation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { NotFoundError, Sandboxd, SandboxdError, ValidationError } from '../src/index.ts';

const SECRET = 'sk-live-sdk-vault-value-4Kq9';
const ROTATED = 'sk-live-sdk-rotated-value-8Zt2';

describe('client.vaults', () => {
  let server: TestServer;
  let client: Sandboxd;
  let other: Sandboxd;
  /** Every answer body the client received, to check that none carries a value. */
  const answers: string[] = [];

  before(async () => {
    server = await startTestServer();
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      answers.push(await response.clone().text());
      return response;
    };
    client = new Sandboxd({ baseUrl: server.baseUrl, apiKey: (await server.createUserWithKey('vera')).apiKey, maxRetries: 0, fetch: recording });
    other = new Sandboxd({ baseUrl: server.baseUrl, apiKey: (await server.createUserWithKey('victor')).apiKey, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
  });

  test('create with a secret, list, get, update, set and delete a secret, request logs, delete; values never come back', async () => {
    const created = await client.vaults.create('ci', {
      description: 'CI tokens',
      secrets: [{ name: 'API_TOKEN', value: SECRET, allowedHosts: ['api.example.com'] }],
    });
    assert.match(created.id, /^vlt_/);
    assert.equal(created.name, 'ci');
    assert.equal(created.description, 'CI tokens');
    assert.deepEqual(
      created.secrets.map((s) => [s.name, s.allowed_hosts]),
      [['API_TOKEN', ['api.example.com']]],
    );

    assert.deepEqual(
      (await client.vaults.list()).map((v) => v.id),
      [created.id],
    );
    assert.deepEqual(
      (await client.vaults.get(created.id)).secrets.map((s) => s.name),
      ['API_TOKEN'],
    );

    const renamed = await client.vaults.update(created.id, { name: 'ci-prod', description: null });
    assert.deepEqual([renamed.name, renamed.description], ['ci-prod', null]);

    const rotated = await client.vaults.setSecret(created.id, 'API_TOKEN', { value: ROTATED, allowedHosts: ['api.example.com', '*.example.org'] });
    assert.deepEqual([rotated.name, rotated.allowed_hosts], ['API_TOKEN', ['api.example.com', '*.example.org']]);
    const added = await client.vaults.setSecret(created.id, 'OTHER_TOKEN', { value: SECRET, allowedHosts: ['other.example.com'] });
    assert.equal(added.name, 'OTHER_TOKEN');
    assert.deepEqual((await client.vaults.get(created.id)).secrets.map((s) => s.name).sort(), ['API_TOKEN', 'OTHER_TOKEN']);

    assert.equal(await client.vaults.deleteSecret(created.id, 'OTHER_TOKEN'), undefined);
    assert.deepEqual(
      (await client.vaults.get(created.id)).secrets.map((s) => s.name),
      ['API_TOKEN'],
    );
    await assert.rejects(client.vaults.deleteSecret(created.id, 'OTHER_TOKEN'), NotFoundError);

    const page = await client.vaults.requestLogs(created.id, { outcome: 'flagged', limit: 10 });
    assert.deepEqual(page, { items: [], next_cursor: null });
    assert.deepEqual(await client.vaults.requestLogs(created.id, { vmId: 'vm-nothing', secretName: 'API_TOKEN', since: '2020-01-01T00:00:00Z' }), {
      items: [],
      next_cursor: null,
    });

    assert.equal(await client.vaults.delete(created.id), undefined);
    await assert.rejects(client.vaults.get(created.id), NotFoundError);
    assert.deepEqual(await client.vaults.list(), []);

    assert.ok(answers.length >= 10);
    for (const text of answers) {
      assert.ok(!text.includes(SECRET) && !text.includes(ROTATED), `an answer carries a value: ${text}`);
    }
  });

  test("another user's vault is not found; a duplicate name is a conflict; bad names and hosts are validation errors", async () => {
    const vault = await client.vaults.create('mine');
    assert.deepEqual(vault.secrets, []);
    await assert.rejects(other.vaults.get(vault.id), NotFoundError);
    await assert.rejects(other.vaults.update(vault.id, { name: 'theirs' }), NotFoundError);
    await assert.rejects(other.vaults.setSecret(vault.id, 'X', { value: 'v', allowedHosts: ['example.com'] }), NotFoundError);
    await assert.rejects(other.vaults.requestLogs(vault.id), NotFoundError);
    await assert.rejects(other.vaults.delete(vault.id), NotFoundError);
    await assert.rejects(client.vaults.create('mine'), (error: unknown) => error instanceof SandboxdError && error.status === 409);
    await assert.rejects(client.vaults.setSecret(vault.id, 'BAD-NAME', { value: 'v', allowedHosts: ['example.com'] }), ValidationError);
    await assert.rejects(client.vaults.setSecret(vault.id, 'GOOD', { value: 'v', allowedHosts: [] }), ValidationError);
    await client.vaults.delete(vault.id);
  });

  test('sessions.create sends vaultIds: the secret is an env name of the session (503 on a server without egress enforcement)', async () => {
    const vault = await client.vaults.create('attach', { secrets: [{ name: 'ATTACHED_TOKEN', value: SECRET, allowedHosts: ['api.example.com'] }] });
    // What the server answers depends on whether it enforces egress (root, nftables, cgroup v2): it says which.
    const refused = (status: number) => (error: unknown) =>
      error instanceof SandboxdError && error.status === (server.services.sandbox.egress.enforces ? status : 503);
    await assert.rejects(client.sessions.create({ vcpuCount: 1, vaultIds: ['vlt_nothing'] }), refused(404));
    await assert.rejects(other.sessions.create({ vaultIds: [vault.id] }), refused(404), "another user's vault");
    if (!server.services.sandbox.egress.enforces) {
      await assert.rejects(client.sessions.create({ vcpuCount: 1, vaultIds: [vault.id] }), refused(503));
      return;
    }
    const session = await client.sessions.create({ vcpuCount: 1, vaultIds: [vault.id] });
    const info = await client.sessions.info(session.id);
    assert.ok(((info as { env_keys?: string[] }).env_keys ?? []).includes('ATTACHED_TOKEN'), JSON.stringify(info));
    assert.ok(!JSON.stringify(info).includes(SECRET));
  });
});
