/**
 * `sandbox network` as a user runs it (a child process), against the real server: create prints the id, ls shows
 * the network and its /24, join of a VM that is not yours fails with the server's 404, rm deletes it.
 * (Members talking to each other on real VMs: packages/server/test/networks/networks.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { makeHome, runCli, type CliHome } from './run-cli.ts';

describe('sandbox network', { timeout: 5 * 60_000 }, () => {
  let server: TestServer;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await startTestServer();
    const apiKey = (await server.createUserWithKey('nina', 'pro')).apiKey;
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: apiKey });
  });
  after(async () => {
    home?.remove();
    await server?.close();
  });

  test('create, ls, join refused for a VM that is not yours, rm', async () => {
    const created = await runCli(['network', 'create', 'lan'], env);
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    assert.match(id, /^net-[0-9a-f]{20}$/);
    const listed = await runCli(['network', 'ls'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`${id}\\s+lan\\s+10\\.250\\.0\\.0/24\\s+-`));
    const refused = await runCli(['network', 'join', 'lan', 'vm-nosuchvm'], env);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /not found/i);
    const removed = await runCli(['network', 'rm', 'lan'], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match((await runCli(['network', 'ls'], env)).stdout, /No networks/);
  });
});
