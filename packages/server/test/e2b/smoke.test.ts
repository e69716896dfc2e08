/**
 * First light of the E2B facade: the unmodified `e2b` SDK creates a sandbox and runs a command.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Sandbox } from 'e2b';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('e2b smoke', () => {
  let server: TestServer;
  let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
  before(async () => {
    server = await startTestServer();
    const { apiKey } = await server.createUserWithKey('e2b', 'pro');
    opts = { apiKey, apiUrl: `${server.baseUrl}/e2b`, sandboxUrl: `${server.baseUrl}/e2b/sandbox` };
  });
  after(() => server.close());

  test('create, run, kill', async () => {
    const sandbox = await Sandbox.create(opts);
    const out: string[] = [];
    const result = await sandbox.commands.run('echo hello; whoami; pwd', { onStdout: (d) => void out.push(d) });
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout, 'hello\nuser\n/home/user\n');
    const info = await Sandbox.getInfo(sandbox.sandboxId, opts);
    assert.equal(info.state, 'running');
    assert.equal(out.join(''), 'hello\nuser\n/home/user\n');
    await sandbox.kill();
    assert.equal(await Sandbox.kill(sandbox.sandboxId, opts), false, 'a killed sandbox is gone');
  });
});
