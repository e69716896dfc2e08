/**
 * The browser tests' web server in a network namespace (`netns-web.ts`): reachable from the host and, through
 * the network guard, from the VM user that QEMU runs as; the pages the browser tests drive; and no namespace
 * or veth left behind, whether the test stops it, exits, is terminated or is killed.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import vm from 'node:vm';
import { after, before, describe, test } from 'node:test';
import { runProgram } from '../../src/host/run-program.ts';
import { DEFAULT_BLOCKED_IPV4, networkGuardStatus } from '../../src/vm/qemu/network-guard.ts';
import { DEFAULT_VM_USER, lookupUser } from '../../src/vm/qemu/vm-user.ts';
import { startNetnsWebServer, type NetnsWebServer } from './netns-web.ts';
import { SERVER_ROOT } from './processes.ts';

const skip = process.getuid?.() !== 0 ? 'needs root (network namespaces)' : spawnSync('ip', ['-V']).status !== 0 ? 'needs iproute2 (ip)' : false;

function toNumber(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function inCidr(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/') as [string, string];
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toNumber(address) / size) === Math.floor(toNumber(base) / size);
}

function namespaces(): string[] {
  return spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .stdout.split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter(Boolean);
}

function interfaceExists(name: string): boolean {
  return spawnSync('ip', ['link', 'show', name], { stdio: 'ignore' }).status === 0;
}

async function text(url: string, init?: RequestInit): Promise<{ status: number; body: string; contentType: string | null; ms: number }> {
  const started = Date.now();
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000), ...init });
  return { status: response.status, body: await response.text(), contentType: response.headers.get('content-type'), ms: Date.now() - started };
}

/** Runs the child fixture that starts a server and ends without stop(); resolves with what it printed. */
function startChild(mode: 'exit' | 'wait') {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(SERVER_ROOT, 'test/helpers/fixtures/netns-web-child.ts'), mode], { cwd: SERVER_ROOT });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const started = new Promise<{ namespace: string; hostInterface: string; baseUrl: string }>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then(({ code }) => reject(new Error(`the child exited with ${code} before it printed its server:\n${stderr}`)));
  });
  return { child, started, exited };
}

describe('web server in a network namespace', { skip }, () => {
  let server: NetnsWebServer;
  before(async () => {
    server = await startNetnsWebServer({
      '/extra': '<!doctype html><title>Extra</title><h1 id="extra">An extra page</h1>',
      '/teapot': { status: 418, contentType: 'text/plain', headers: { 'x-fixture': 'yes' }, body: 'short and stout' },
    });
  });
  after(async () => server?.stop());

  test('the host fetches /form from an address in 198.51.100.0/24 that the network guard does not block', async () => {
    assert.match(server.baseUrl, /^http:\/\/198\.51\.100\.\d{1,3}$/);
    assert.ok(
      inCidr(server.serverAddress, server.subnet) && inCidr(server.hostAddress, server.subnet),
      `${server.serverAddress}, ${server.hostAddress} in ${server.subnet}`,
    );
    assert.deepEqual(
      DEFAULT_BLOCKED_IPV4.filter((cidr) => inCidr(server.serverAddress, cidr)),
      [],
    );
    const form = await text(`${server.baseUrl}/form`);
    assert.equal(form.status, 200);
    assert.equal(form.contentType, 'text/html; charset=utf-8');
    for (const needle of [
      'id="name"',
      'type="email" id="email"',
      'type="password" id="password"',
      'id="bio"',
      'id="color"',
      'type="checkbox"',
      'id="submit"',
      'id="result"',
      'id="counter-btn"',
      'id="count"',
      'id="last-key"',
      "addEventListener('keydown'",
    ]) {
      assert.ok(form.body.includes(needle), `the form page has ${needle}`);
    }
  });

  test("the server lives in the namespace: its address is on the namespace's interface, only the host end is on the host", async () => {
    assert.ok(namespaces().includes(server.namespace));
    assert.match(server.namespace, /^sbxw-\d+-[0-9a-f]+$/);
    const inside = (await runProgram('ip', ['-n', server.namespace, '-4', '-o', 'addr', 'show'])).stdout;
    const host = (await runProgram('ip', ['-4', '-o', 'addr', 'show'])).stdout;
    assert.ok(inside.includes(`inet ${server.serverAddress}/30`), inside);
    assert.ok(host.includes(`inet ${server.hostAddress}/30`) && host.includes(server.hostInterface), host);
    assert.ok(!host.includes(`inet ${server.serverAddress}/`), "the server address is not the host's");
  });

  test('the pages the browser tests drive', async () => {
    const index = await text(`${server.baseUrl}/`);
    for (const href of ['/form', '/links', '/page/1', '/delayed?ms=1000', '/never', '/slow?ms=2000', '/login', '/echo-headers'])
      assert.ok(index.body.includes(`href="${href}"`), `/ links to ${href}`);

    const links = (await text(`${server.baseUrl}/links`)).body;
    for (let n = 1; n <= 5; n++) assert.ok(links.includes(`href="/page/${n}">Go to page ${n}</a>`), `link to page ${n}`);
    for (const needle of ['id="hover-target"', "addEventListener('mouseover'", 'height: 5000px', 'id="bottom"']) assert.ok(links.includes(needle), needle);

    const page4 = (await text(`${server.baseUrl}/page/4`)).body;
    assert.ok(page4.includes('<title>Page 4</title>') && page4.includes('<h1>Page 4</h1>'), page4);

    const delayed = (await text(`${server.baseUrl}/delayed?ms=1234`)).body;
    assert.ok(delayed.includes("late.id = 'late'") && delayed.includes('}, 1234);'), delayed);

    const slow = await text(`${server.baseUrl}/slow?ms=400`);
    assert.equal(slow.status, 200);
    assert.ok(slow.ms >= 400, `answered after ${slow.ms} ms`);

    const never = Date.now();
    await assert.rejects(fetch(`${server.baseUrl}/never`, { signal: AbortSignal.timeout(700) }), { name: 'TimeoutError' });
    assert.ok(Date.now() - never >= 650, '/never held the request until the client gave up');

    const login = (await text(`${server.baseUrl}/login?password=${encodeURIComponent('s3cr</script>et')}`)).body;
    assert.ok(login.includes('const expected = "s3cr\\u003c/script>et";'), 'the expected password is a safe script literal');
    for (const needle of ['id="username"', 'id="password"', 'id="login"', 'id="welcome"', "'Welcome ' + user"]) assert.ok(login.includes(needle), needle);
    assert.ok((await text(`${server.baseUrl}/login`)).body.includes('const expected = "letmein";'), 'a default password');

    const echoed = JSON.parse((await text(`${server.baseUrl}/echo-headers`, { headers: { 'x-test': 'hello' } })).body);
    assert.equal(echoed['x-test'], 'hello');

    assert.ok((await text(`${server.baseUrl}/extra`)).body.includes('<h1 id="extra">An extra page</h1>'), 'pages given to startNetnsWebServer are served');
    const teapot = await fetch(`${server.baseUrl}/teapot`);
    assert.deepEqual(
      [teapot.status, teapot.headers.get('content-type'), teapot.headers.get('x-fixture'), await teapot.text()],
      [418, 'text/plain', 'yes', 'short and stout'],
    );
    assert.equal((await text(`${server.baseUrl}/no-such-page`)).status, 404);

    // The pages' scripts at least parse (a browser would skip a broken one silently, and the page would just not react).
    for (const pagePath of ['/form', '/links', '/delayed?ms=5', '/login']) {
      const scripts = [...(await text(`${server.baseUrl}${pagePath}`)).body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
      assert.ok(scripts.length > 0, `${pagePath} has a script`);
      for (const script of scripts) assert.doesNotThrow(() => new vm.Script(script), `${pagePath}: ${script}`);
    }
  });

  test('requests() lists what was asked for with the user agent, but not its own reads', async () => {
    await text(`${server.baseUrl}/page/2?from=test`, { headers: { 'user-agent': 'netns-web-test/1' } });
    const log = await server.requests();
    const entry = log.find((r) => r.path === '/page/2?from=test');
    assert.ok(entry, JSON.stringify(log));
    assert.deepEqual([entry.method, entry.userAgent], ['GET', 'netns-web-test/1']);
    assert.ok(!Number.isNaN(Date.parse(entry.at)));
    assert.ok(!log.some((r) => r.path.startsWith('/__requests')));
  });

  test('the VM user reaches the server through the network guard, which keeps it from loopback', async (t) => {
    const vmUser = await lookupUser(DEFAULT_VM_USER);
    if (!vmUser) return t.skip(`no user ${DEFAULT_VM_USER}: the engine's host preparation creates it`);
    if (spawnSync('curl', ['--version'], { stdio: 'ignore' }).status !== 0) return t.skip('needs curl');
    const curl = (url: string) =>
      runProgram('runuser', ['-u', DEFAULT_VM_USER, '--', 'curl', '-sS', '--max-time', '5', '-A', 'sandboxd-vm-curl', url], { timeoutMs: 15_000 });

    const { stdout } = await curl(`${server.baseUrl}/form`);
    assert.ok(stdout.includes('id="name"'), stdout);
    assert.ok(
      (await server.requests()).some((r) => r.path === '/form' && r.userAgent === 'sandboxd-vm-curl'),
      "the server saw the VM user's request",
    );

    const guard = await networkGuardStatus(vmUser.uid);
    if (!guard.active) {
      t.diagnostic(`the network guard is not loaded (${guard.detail}): the reach above did not go through it`);
      return;
    }
    // The same user is refused a server on loopback: the guard is on, so the reach above went through it.
    const loopback = http.createServer((_request, response) => response.end('loopback'));
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = loopback.address() as AddressInfo;
      assert.equal((await text(`http://127.0.0.1:${port}/`)).body, 'loopback', 'root reaches it');
      await assert.rejects(curl(`http://127.0.0.1:${port}/`), /curl/);
    } finally {
      loopback.close();
    }
  });

  test('two servers at once get /30s of their own, and both answer', async () => {
    const second = await startNetnsWebServer({}, { port: 8081 });
    try {
      assert.notEqual(second.subnet, server.subnet);
      assert.notEqual(second.namespace, server.namespace);
      assert.match(second.baseUrl, /:8081$/);
      assert.equal((await text(`${second.baseUrl}/page/9`)).status, 200);
      assert.equal((await text(`${server.baseUrl}/page/9`)).status, 200);
    } finally {
      await second.stop();
    }
  });

  test('stop() ends the server and removes the namespace and the veth pair, after which requests() refuses; a second stop() does nothing', async () => {
    const doomed = await startNetnsWebServer();
    assert.equal((await text(`${doomed.baseUrl}/`)).status, 200);
    await doomed.stop();
    assert.ok(!namespaces().includes(doomed.namespace), 'the namespace is gone');
    assert.ok(!interfaceExists(doomed.hostInterface), 'the veth pair is gone');
    // Nothing is sent to the address now: without its namespace, only the blackhole keeps it on this machine.
    const route = (await runProgram('ip', ['-4', 'route', 'show', 'match', doomed.serverAddress])).stdout;
    assert.match(route, /^blackhole 198\.51\.100\.0\/24/m, 'the address falls to the blackhole');
    assert.ok(!route.includes(doomed.hostInterface), route);
    await assert.rejects(doomed.requests(), /stopped/);
    await doomed.stop();
  });

  test('a test process that exits or is terminated without stop() leaves nothing; one killed outright is reaped by the next start', async () => {
    for (const mode of ['exit', 'SIGTERM'] as const) {
      const run = startChild(mode === 'exit' ? 'exit' : 'wait');
      const started = await run.started;
      if (mode === 'SIGTERM') {
        assert.equal((await text(`${started.baseUrl}/`)).status, 200);
        run.child.kill('SIGTERM');
      }
      const ended = await run.exited;
      assert.deepEqual(ended, mode === 'exit' ? { code: 0, signal: null } : { code: null, signal: 'SIGTERM' });
      assert.ok(!namespaces().includes(started.namespace), `${mode}: the namespace is gone`);
      assert.ok(!interfaceExists(started.hostInterface), `${mode}: the veth pair is gone`);
    }

    const killed = startChild('wait');
    const started = await killed.started;
    killed.child.kill('SIGKILL');
    await killed.exited;
    assert.ok(namespaces().includes(started.namespace), 'SIGKILL leaves the namespace');
    const next = await startNetnsWebServer();
    try {
      assert.ok(!namespaces().includes(started.namespace), 'the next start removed it');
      assert.ok(!interfaceExists(started.hostInterface), 'and its veth pair');
    } finally {
      await next.stop();
    }
  });
});
