/**
 * First light of the E2B facade: the unmodified `e2b` SDK creates a sandbox and runs a command.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request as httpRequest } from 'node:http';
import { Sandbox } from 'e2b';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('e2b smoke', () => {
  let server: TestServer;
  let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
  let nativeKey: string;
  before(async () => {
    server = await startTestServer();
    const { apiKey } = await server.createUserWithKey('e2b', 'pro');
    nativeKey = apiKey;
    // A key in E2B's shape (for tools that check it); it works on both APIs, like the native one.
    const created = await call(server, 'POST', '/v1/api-keys/', { apiKey, json: { format: 'e2b', description: 'for the e2b SDK' } });
    assert.equal(created.status, 200);
    assert.match(created.body.full_key, /^e2b_[0-9a-f]{40}$/);
    opts = { apiKey: created.body.full_key, apiUrl: `${server.baseUrl}/e2b`, sandboxUrl: `${server.baseUrl}/e2b/sandbox` };
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: created.body.full_key })).status, 200, 'an e2b-format key works on the native API');
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
    assert.equal((await Sandbox.getInfo(sandbox.sandboxId, { ...opts, apiKey: nativeKey })).sandboxId, sandbox.sandboxId, 'a native key works on the E2B API');
    assert.equal(out.join(''), 'hello\nuser\n/home/user\n');

    // getHost: an app in the sandbox, by its host name (the app's own origin) and through the base URL.
    await sandbox.commands.run('mkdir -p site && echo "<h1>from the sandbox</h1>" > site/index.html && cd site && python3 -m http.server 8000', {
      background: true,
    });
    const host = sandbox.getHost(8000);
    assert.match(host, new RegExp(`^8000-${sandbox.sandboxId}\\.localhost:\\d+$`));
    const byHost = await getWithRetry(server.baseUrl, '/', { host, 'x-access-token': 'sbx_at_must-not-reach-the-app' });
    assert.equal(byHost.status, 200);
    assert.match(byHost.body, /from the sandbox/);
    const byBase = await getWithRetry(server.baseUrl, '/e2b/sandbox/index.html', { 'e2b-sandbox-id': sandbox.sandboxId, 'e2b-sandbox-port': '8000' });
    assert.equal(byBase.status, 200);
    assert.match(byBase.body, /from the sandbox/);
    assert.match(byBase.headers['content-security-policy'] as string, /sandbox/, 'on the API origin the app is sandboxed');

    // No sandboxd credential reaches the app, whatever header carries it.
    await sandbox.commands.run(`node -e 'require("http").createServer((q, s) => s.end(JSON.stringify(q.headers))).listen(8001)'`, { background: true });
    const echoed = await getWithRetry(server.baseUrl, '/', {
      host: sandbox.getHost(8001),
      'x-access-token': `sbx_at_${'a'.repeat(43)}`,
      'e2b-traffic-access-token': `sbx_tt_${'b'.repeat(43)}`,
      'x-api-key': opts.apiKey,
      'x-app-header': 'kept',
    });
    assert.equal(echoed.status, 200);
    const seen = JSON.parse(echoed.body) as Record<string, string>;
    assert.equal(seen['x-app-header'], 'kept');
    for (const name of ['x-access-token', 'e2b-traffic-access-token', 'x-api-key']) assert.equal(seen[name], undefined, `${name} must not reach the VM`);

    // What sandboxd does not offer is refused before anything is made, in words the SDK shows.
    // Pausing at the timeout is offered (vms/auto-pause.test.ts shows the pause): the create is taken.
    const pausing = await Sandbox.create({ ...opts, lifecycle: { onTimeout: 'pause' } });
    assert.equal(await Sandbox.kill(pausing.sandboxId, opts), true);

    assert.equal(await sandbox.isRunning(), true);
    await sandbox.kill();
    assert.equal(await sandbox.isRunning(), false);
    assert.equal(await Sandbox.kill(sandbox.sandboxId, opts), false, 'a killed sandbox is gone');
    // Its session does not come back to life with a new VM at the next command: the sandbox is not found.
    await assert.rejects(sandbox.commands.run('true'), { name: 'NotFoundError' });
  });

  test('a sandbox without public traffic: its ports take its traffic token', async () => {
    const sandbox = await Sandbox.create({ ...opts, network: { allowPublicTraffic: false } });
    try {
      assert.match(sandbox.trafficAccessToken ?? '', /^sbx_tt_/);
      await sandbox.commands.run(`node -e 'require("http").createServer((q, s) => s.end("private app")).listen(8002)'`, { background: true });
      const host = sandbox.getHost(8002);
      const refused = await getWithRetry(server.baseUrl, '/', { host });
      assert.equal(refused.status, 403, 'without the token');
      const opened = await getWithRetry(server.baseUrl, '/', { host, 'e2b-traffic-access-token': sandbox.trafficAccessToken! });
      assert.deepEqual([opened.status, opened.body], [200, 'private app']);
    } finally {
      await sandbox.kill();
    }
  });
});

/** GET through the test server with the given headers, retried while the app in the VM is not up yet (502). */
async function getWithRetry(baseUrl: string, path: string, headers: Record<string, string>) {
  const url = new URL(baseUrl);
  for (let attempt = 0; ; attempt++) {
    const answer = await new Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      });
      req.on('error', reject);
      req.end();
    });
    if (answer.status !== 502 || attempt >= 40) return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
