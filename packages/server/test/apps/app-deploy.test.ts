/**
 * App deployments on real VMs: a folder with sandboxd.yaml and a tiny Python http.server app, packed with
 * `tar -czf` and POSTed. Its log streams, it goes live and its URL (through the server's preview proxy, with the
 * Host header the URL names) answers v1; a crash of its process is seen and repaired; a redeploy to v2 while a
 * client polls the URL every ~50 ms fails no request and switches from v1 to v2 for good, and the old VM ends; a
 * rollback brings v1 back the same way; a manifest error is a 400 naming the field; another user gets 404.
 * A custom domain claimed for the app (its TXT record served by a DNS server on loopback, helpers/dns-server.ts)
 * serves the app once verified (and not before), follows its redeploys, and goes with the app.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const APP_PY = `
import http.server

VERSION = open('version.txt').read().strip()

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def do_GET(self):
        body = b'ok' if self.path == '/health' else str(self.headers).encode() if self.path == '/headers' else VERSION.encode()
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

http.server.ThreadingHTTPServer(('0.0.0.0', 8000), Handler).serve_forever()
`;

function manifest(version: string): string {
  return [
    'name: hello',
    'port: 8000',
    'health_check:',
    '  path: /health',
    '  interval_seconds: 1',
    '  timeout_seconds: 2',
    '  start_timeout_seconds: 90',
    `build: echo installing ${version} && echo ${version} > version.txt`,
    'cmd: python3 -u app.py',
    'env: { GREETING: hi }',
    'memory_mb: 256',
    '',
  ].join('\n');
}

/** The app's folder packed as the CLI does: `tar -czf` of its contents. */
function pack(files: Record<string, string>): Buffer {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-app-test-'));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  const out = path.join(dir, '..', `${path.basename(dir)}.tar.gz`);
  execFileSync('tar', ['-czf', out, '-C', dir, '.']);
  const bytes = fs.readFileSync(out);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(out, { force: true });
  return bytes;
}

/** A GET with its own Host header (fetch cannot set Host). */
function getWithHost(port: number, host: string, urlPath = '/', headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: urlPath, headers: { ...headers, host }, agent: false, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Polls the app every ~50 ms until stopped; records every answer (or error). */
function poll(port: number, host: string): { stop: () => Promise<{ bodies: string[]; failures: string[] }> } {
  const bodies: string[] = [];
  const failures: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const answer = await getWithHost(port, host);
        if (answer.status === 200) bodies.push(answer.body);
        else failures.push(`${answer.status} ${answer.body.slice(0, 200)}`);
      } catch (error) {
        failures.push((error as Error).message);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { bodies, failures };
    },
  };
}

/** The distinct answers in order: ['v1', 'v2'] means v1 until the switch, v2 after, never back. */
function runs(bodies: string[]): string[] {
  return bodies.filter((body, i) => i === 0 || body !== bodies[i - 1]);
}

describe('app deployments (real VMs)', () => {
  let server: TestServer;
  let port: number;
  let owner: string;
  let stranger: string;
  let host: string;
  let dns: DnsServer;
  /** A verified custom domain of the app, and one claimed but never verified. */
  const appDomain = 'hello-app.example.com';
  const unverifiedDomain = 'hello-pending.example.com';
  let appDomainId: string;

  const deploy = async (archive: Buffer, query = '') => {
    const response = await fetch(`${server.baseUrl}/v1/apps/deployments${query}`, {
      method: 'POST',
      headers: { 'x-api-key': owner, 'content-type': 'application/gzip' },
      body: archive,
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  /** Follows a deployment's log to its end; answers the text. */
  const followLog = async (version: number) => {
    const response = await fetch(`${server.baseUrl}/v1/apps/hello/deployments/${version}/logs?follow=true`, {
      headers: { 'x-api-key': owner },
      signal: AbortSignal.timeout(180_000),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    return response.text();
  };
  const events = async (type: string) => server.services.database.db.selectFrom('events').selectAll().where('type', '=', type).orderBy('created_at').execute();
  const vmStatus = async (vmId: string) => (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey: owner })).body?.status as string;

  before(async () => {
    dns = await startDnsServer();
    server = await startTestServer({ config: { appUploadMaxMb: 1, dnsServers: [dns.address] } });
    port = Number(new URL(server.baseUrl).port);
    ({ apiKey: owner } = await server.createUserWithKey('appowner', 'pro'));
    ({ apiKey: stranger } = await server.createUserWithKey('stranger', 'pro'));
    host = `hello--appowner.localhost:${port}`;
  });
  after(async () => {
    await server?.close();
    await dns?.close();
  });

  test('a manifest error is a 400 naming the field; no app is made', async () => {
    const badPort = await deploy(pack({ 'sandboxd.yaml': 'name: hello\nport: eighty\nstart: python3 app.py\n', 'app.py': APP_PY }));
    assert.equal(badPort.status, 400, JSON.stringify(badPort.body));
    assert.match(badPort.body.detail ?? badPort.body.message ?? JSON.stringify(badPort.body), /port/);
    const noStart = await deploy(pack({ 'sandboxd.yaml': 'name: hello\nport: 8000\n' }));
    assert.equal(noStart.status, 400);
    assert.match(JSON.stringify(noStart.body), /start/);
    const unknown = await deploy(pack({ 'sandboxd.yaml': 'name: hello\nport: 8000\nstart: x\nreplicaz: 2\n' }));
    assert.equal(unknown.status, 400);
    assert.match(JSON.stringify(unknown.body), /replicaz/);
    const noManifest = await deploy(pack({ 'app.py': APP_PY }));
    assert.equal(noManifest.status, 400);
    assert.match(JSON.stringify(noManifest.body), /sandboxd\.yaml/);
    const tooLarge = await deploy(pack({ 'sandboxd.yaml': 'port: 8000\nstart: x\n', 'big.bin': crypto.randomBytes(1536 * 1024).toString('base64') }));
    assert.equal(tooLarge.status, 413, JSON.stringify(tooLarge.body));
    assert.deepEqual((await call(server, 'GET', '/v1/apps', { apiKey: owner })).body, { apps: [] });
  });

  let v1Vm: string;

  test('v1 deploys: its log streams, it goes live, its URL answers v1', async () => {
    const started = Date.now();
    const accepted = await deploy(pack({ 'sandboxd.yaml': manifest('v1'), 'app.py': APP_PY }));
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    assert.equal(accepted.body.app.name, 'hello');
    assert.equal(accepted.body.app.url, `http://${host}/`);
    assert.equal(accepted.body.deployment.version, 1);
    assert.equal(accepted.body.deployment.manifest.start, 'python3 -u app.py', 'the alias cmd is start');
    assert.equal(accepted.body.deployment.manifest.install, 'echo installing v1 && echo v1 > version.txt', 'the alias build is install');
    const log = await followLog(1);
    assert.match(log, /install\| installing v1/);
    assert.match(log, /taking snapshot app-[a-z2-7]{12}-v1/);
    assert.match(log, /live: /, log);
    const app = (await call(server, 'GET', '/v1/apps/hello', { apiKey: owner })).body;
    assert.equal(app.status, 'live');
    assert.equal(app.live_version, 1);
    const deployment = (await call(server, 'GET', '/v1/apps/hello/deployments/1', { apiKey: owner })).body;
    assert.equal(deployment.status, 'live');
    assert.equal(deployment.vm_ids.length, 1);
    v1Vm = deployment.vm_ids[0];
    const answer = await getWithHost(port, host);
    assert.deepEqual(answer, { status: 200, body: 'v1' });
    console.log(`deploy v1 (VM, upload, install, snapshot, start, healthy): ${Date.now() - started} ms`);
    // The app's host is VM-served content: the owner's credentials sent to it never reach the app (it echoes its headers).
    const echoed = await getWithHost(port, host, '/headers', {
      'x-api-key': owner,
      authorization: `Bearer ${owner}`,
      cookie: `sandboxd_preview=${owner}; theirs=kept`,
      'x-app-header': 'kept',
    });
    assert.equal(echoed.status, 200, echoed.body);
    assert.match(echoed.body, /x-app-header: kept/i, 'the app sees the request headers');
    assert.match(echoed.body, /theirs=kept/, "the app's own cookie passes");
    assert.ok(!echoed.body.includes(owner), `no sandboxd credential reaches the app: ${echoed.body}`);
    assert.doesNotMatch(echoed.body, /^(x-api-key|authorization):/im);
    const output = await (await fetch(`${server.baseUrl}/v1/apps/hello/logs`, { headers: { 'x-api-key': owner } })).text();
    assert.match(output, /GET \/ HTTP\/1\.1/, 'the app log has the start command’s output');
  });

  test('a custom domain claimed for the app serves it once verified (not before), credentials filtered; another user cannot claim it', async () => {
    const appId = (await call(server, 'GET', '/v1/apps/hello', { apiKey: owner })).body.id as string;
    // Another user naming this app (by id or name) gets the 404 of an app that does not exist.
    for (const key of [appId, 'hello']) {
      const theirs = await call(server, 'POST', '/v1/custom-domains', { apiKey: stranger, json: { domain: 'theirs.example.com', app_id: key } });
      assert.equal(theirs.status, 404, theirs.text);
    }
    const combined = await call(server, 'POST', '/v1/custom-domains', { apiKey: owner, json: { domain: appDomain, app_id: 'hello', port: 8000 } });
    assert.equal(combined.status, 422, combined.text);
    assert.match(combined.text, /app_id cannot be combined with port/);
    const pending = await call(server, 'POST', '/v1/custom-domains', { apiKey: owner, json: { domain: unverifiedDomain, app_id: appId } });
    assert.equal(pending.status, 201, pending.text);
    const created = await call(server, 'POST', '/v1/custom-domains', { apiKey: owner, json: { domain: appDomain, app_id: 'hello' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.app_id, appId, 'the name resolves to the app id');
    assert.equal(created.body.session_id, null);
    assert.equal(created.body.port, null);
    appDomainId = created.body.id;
    assert.equal((await getWithHost(port, appDomain, '/health')).status, 404, 'not served before it is verified');
    dns.setTxt(created.body.verification.name, [created.body.verification.value]);
    const verified = await call(server, 'POST', `/v1/custom-domains/${appDomainId}/verify`, { apiKey: owner });
    assert.equal(verified.body.status, 'verified', verified.text);
    assert.deepEqual(await getWithHost(port, appDomain, '/health'), { status: 200, body: 'ok' });
    assert.deepEqual(await getWithHost(port, appDomain), { status: 200, body: 'v1' });
    const unverified = await getWithHost(port, unverifiedDomain, '/health');
    assert.equal(unverified.status, 404, unverified.body);
    assert.notEqual(unverified.body, 'ok');
    const echoed = await getWithHost(port, appDomain, '/headers', { 'x-api-key': owner, authorization: `Bearer ${owner}`, 'x-app-header': 'kept' });
    assert.match(echoed.body, /x-app-header: kept/i);
    assert.ok(!echoed.body.includes(owner), `no sandboxd credential reaches the app through its domain: ${echoed.body}`);
    const app = (await call(server, 'GET', '/v1/apps/hello', { apiKey: owner })).body;
    assert.deepEqual(
      app.custom_domains.map((d: { domain: string; status: string; url: string }) => [d.domain, d.status, d.url]),
      [
        [unverifiedDomain, 'pending', `http://${unverifiedDomain}:${port}/`],
        [appDomain, 'verified', `http://${appDomain}:${port}/`],
      ],
    );
    const listed = (await call(server, 'GET', '/v1/apps', { apiKey: owner })).body.apps[0];
    assert.equal(listed.custom_domains.length, 2);
  });

  test('a crash of its process is seen (app.crashed), it is restarted (app.restarted) and serves again', async () => {
    const vm = (await call(server, 'GET', `/v1/vms/${v1Vm}`, { apiKey: owner })).body;
    const killed = await call(server, 'POST', '/execute', {
      apiKey: owner,
      json: { session_id: vm.session_id, language: 'bash', command: 'pkill -f "[a]pp.py"; echo killed' },
    });
    assert.match(killed.body.stdout, /killed/, JSON.stringify(killed.body));
    const started = Date.now();
    await waitUntil('app.crashed', async () => (await events('app.crashed')).length > 0, 30_000, 200);
    await waitUntil('app.restarted', async () => (await events('app.restarted')).length > 0, 30_000, 200);
    await waitUntil('the app to serve again', async () => (await getWithHost(port, host).catch(() => null))?.body === 'v1', 30_000, 200);
    console.log(`crash → serving again: ${Date.now() - started} ms`);
    const crashed = JSON.parse((await events('app.crashed'))[0]!.payload);
    assert.equal(crashed.reason, 'exited');
    assert.equal(crashed.vm_id, v1Vm);
    await waitUntil('status live', async () => (await call(server, 'GET', '/v1/apps/hello', { apiKey: owner })).body.status === 'live', 15_000, 200);
  });

  test('a replica whose VM is killed is replaced from the version’s snapshot (no install) and serves again', async () => {
    const killed = await call(server, 'DELETE', `/v1/vms/${v1Vm}`, { apiKey: owner });
    assert.ok(killed.status < 300, killed.text);
    const started = Date.now();
    await waitUntil('app.crashed (vm_gone)', async () => (await events('app.crashed')).some((e) => JSON.parse(e.payload).reason === 'vm_gone'), 30_000, 200);
    const replaced = await waitUntil(
      'a new VM in the live set',
      async () => {
        const vmIds = (await call(server, 'GET', '/v1/apps/hello/deployments/1', { apiKey: owner })).body.vm_ids as string[];
        return vmIds[0] !== v1Vm ? vmIds[0] : null;
      },
      30_000,
      200,
    );
    await waitUntil('the app to serve again', async () => (await getWithHost(port, host).catch(() => null))?.body === 'v1', 60_000, 200);
    console.log(`VM killed → replaced from the snapshot and serving: ${Date.now() - started} ms`);
    const vm = (await call(server, 'GET', `/v1/vms/${replaced}`, { apiKey: owner })).body;
    assert.equal(vm.status, 'active');
    v1Vm = replaced!;
  });

  test('a redeploy to v2 fails no request of a client polling every 50 ms; answers switch v1 → v2 for good; the old VM ends', async () => {
    const poller = poll(port, host);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const accepted = await deploy(pack({ 'sandboxd.yaml': manifest('v2'), 'app.py': APP_PY }));
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    assert.equal(accepted.body.deployment.version, 2);
    const log = await followLog(2);
    assert.match(log, /live: /, log);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const { bodies, failures } = await poller.stop();
    assert.deepEqual(failures, [], 'no request failed during the switch');
    assert.deepEqual(runs(bodies), ['v1', 'v2'], `answers: ${runs(bodies).join(' ')}`);
    console.log(`redeploy: ${bodies.length} requests, 0 failed`);
    assert.deepEqual(await getWithHost(port, appDomain), { status: 200, body: 'v2' }, 'the custom domain serves the new version');
    assert.equal(accepted.body.app.custom_domains.length, 2, "a redeploy's answer shows the app's domains");
    const [v1, v2] = [
      (await call(server, 'GET', '/v1/apps/hello/deployments/1', { apiKey: owner })).body,
      (await call(server, 'GET', '/v1/apps/hello/deployments/2', { apiKey: owner })).body,
    ];
    assert.equal(v1.status, 'superseded');
    assert.equal(v2.status, 'live');
    const listed = (await call(server, 'GET', '/v1/apps/hello/deployments', { apiKey: owner })).body.deployments;
    assert.deepEqual(
      listed.map((d: { version: number }) => d.version),
      [2, 1],
    );
    const oldVm = v1.vm_ids[0];
    await waitUntil('the old VM to end', async () => (await vmStatus(oldVm)) === 'killed', 30_000, 250);
  });

  test('a rollback brings v1 back from its snapshot with no failed request', async () => {
    const poller = poll(port, host);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const accepted = await call(server, 'POST', '/v1/apps/hello/rollback', { apiKey: owner, json: {} });
    assert.equal(accepted.status, 202, accepted.text);
    assert.equal(accepted.body.deployment.version, 1);
    const log = await followLog(1);
    assert.match(log, /rollback: bringing version 1 up from its snapshot/);
    assert.doesNotMatch(log.slice(log.indexOf('rollback:')), /install\|/, 'a rollback does not install again');
    await waitUntil('v1 live', async () => (await call(server, 'GET', '/v1/apps/hello', { apiKey: owner })).body.live_version === 1, 30_000, 200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const { bodies, failures } = await poller.stop();
    assert.deepEqual(failures, [], 'no request failed during the rollback');
    assert.deepEqual(runs(bodies), ['v2', 'v1'], `answers: ${runs(bodies).join(' ')}`);
    console.log(`rollback: ${bodies.length} requests, 0 failed`);
    assert.equal((await events('app.rolled_back')).length, 1);
  });

  test('a restart moves the live version to new VMs with no failed request', async () => {
    const before = (await call(server, 'GET', '/v1/apps/hello/deployments/1', { apiKey: owner })).body.vm_ids as string[];
    const poller = poll(port, host);
    const accepted = await call(server, 'POST', '/v1/apps/hello/restart', { apiKey: owner });
    assert.equal(accepted.status, 202, accepted.text);
    assert.equal(accepted.body.deployment.version, 1);
    assert.match(await followLog(1), /restart: bringing version 1 up from its snapshot/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { bodies, failures } = await poller.stop();
    assert.deepEqual(failures, []);
    assert.deepEqual(runs(bodies), ['v1']);
    const after = (await call(server, 'GET', '/v1/apps/hello/deployments/1', { apiKey: owner })).body;
    assert.equal(after.status, 'live');
    assert.notDeepEqual(after.vm_ids, before);
    await waitUntil('the previous VM to end', async () => (await vmStatus(before[0]!)) === 'killed', 30_000, 250);
  });

  test('an install that exits non-zero fails its version with its output; the live app is untouched', async () => {
    const accepted = await deploy(
      pack({ 'sandboxd.yaml': 'port: 8000\ninstall: echo boom >&2; exit 3\nstart: python3 -u app.py\n', 'app.py': APP_PY }),
      '?name=broken',
    );
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    assert.equal(accepted.body.app.name, 'broken', 'the name parameter names an app whose manifest has none');
    const response = await fetch(`${server.baseUrl}/v1/apps/broken/deployments/1/logs?follow=true`, { headers: { 'x-api-key': owner } });
    const log = await response.text();
    assert.match(log, /install\| boom/);
    assert.match(log, /failed: install exited with 3/);
    const deployment = (await call(server, 'GET', '/v1/apps/broken/deployments/1', { apiKey: owner })).body;
    assert.equal(deployment.status, 'failed');
    assert.match(deployment.error, /install exited with 3/);
    assert.equal((await call(server, 'GET', '/v1/apps/broken', { apiKey: owner })).body.status, 'failed');
    assert.equal((await events('app.deployment_failed')).length, 1);
    await waitUntil('the failed version’s VM to end', async () => (await vmStatus(deployment.vm_ids[0])) === 'killed', 30_000, 250);
    assert.deepEqual(await getWithHost(port, host), { status: 200, body: 'v1' });
    assert.equal((await call(server, 'DELETE', '/v1/apps/broken', { apiKey: owner })).status, 204);
  });

  test('another user gets 404 on the app, its deployments, logs, rollback, restart and delete', async () => {
    const paths: [string, string][] = [
      ['GET', '/v1/apps/hello'],
      ['GET', '/v1/apps/hello/deployments'],
      ['GET', '/v1/apps/hello/deployments/1'],
      ['GET', '/v1/apps/hello/deployments/1/logs'],
      ['GET', '/v1/apps/hello/logs'],
      ['POST', '/v1/apps/hello/rollback'],
      ['POST', '/v1/apps/hello/restart'],
      ['DELETE', '/v1/apps/hello'],
    ];
    const appId = (await call(server, 'GET', '/v1/apps/hello', { apiKey: owner })).body.id;
    for (const [method, url] of paths) {
      for (const target of [url, url.replace('hello', appId)]) {
        const answer = await call(server, method, target, { apiKey: stranger, ...(method === 'POST' ? { json: {} } : {}) });
        assert.equal(answer.status, 404, `${method} ${target}: ${answer.text}`);
      }
    }
    assert.deepEqual((await call(server, 'GET', '/v1/apps', { apiKey: stranger })).body, { apps: [] });
  });

  test('delete: its URL stops at once, its VMs end', async () => {
    const vmIds = (await call(server, 'GET', '/v1/apps/hello/deployments/1', { apiKey: owner })).body.vm_ids as string[];
    const deleted = await call(server, 'DELETE', '/v1/apps/hello', { apiKey: owner });
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal((await getWithHost(port, host)).status, 404);
    assert.equal((await getWithHost(port, appDomain, '/health')).status, 404, 'its custom domain stops with it');
    assert.deepEqual((await call(server, 'GET', '/v1/custom-domains', { apiKey: owner })).body, { custom_domains: [] }, 'its domains are deleted');
    assert.deepEqual(
      (await events('custom_domain.deleted')).map((e) => [e.subject_id, JSON.parse(e.payload).reason]).filter(([id]) => id === appDomainId),
      [[appDomainId, 'app_deleted']],
    );
    assert.equal((await call(server, 'GET', '/v1/apps/hello', { apiKey: owner })).status, 404);
    for (const vmId of vmIds) await waitUntil(`VM ${vmId} to end`, async () => (await vmStatus(vmId)) === 'killed', 30_000, 250);
    assert.deepEqual(
      (await events('app.deleted')).map((e) => JSON.parse(e.payload).name),
      ['broken', 'hello'],
    );
  });
});
