/**
 * App exposure against a real VM: an HTTP server and a WebSocket echo server run inside the VM and are
 * reached through the app URL, the host-name URL, and shares (public, private link → cookie, revoked).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { freePort } from '../helpers/ports.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const APP_SOURCE = fs.readFileSync(new URL('./fixtures/preview_app.py', import.meta.url));
const APP_PORT = 8000;
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The bytes /big?n= answers: 0..255 repeated. */
function pattern(size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = i % 256;
  return out;
}

/** A raw HTTP request (fetch cannot set Host), answered with status, headers and body. */
function rawRequest(
  port: number,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a WebSocket, sends `message`, resolves with the first answer. */
function echoOnce(url: string, headers: Record<string, string>, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => socket.send(message));
    socket.once('message', (data) => {
      resolve(data.toString());
      socket.close();
    });
    socket.once('unexpected-response', (_request, response) => reject(new Error(`handshake answered ${response.statusCode}`)));
    socket.once('error', reject);
  });
}

describe('preview proxy, app URLs and shares (real VM)', () => {
  let server: TestServer;
  let port: number;
  let owner: string;
  let stranger: string;
  let sessionId: string;
  let appUrl: { url: string; direct_url: string; vm_id: string; vm_ip: string; port: number; status: string; expires_in_seconds: number; session_id: string };

  before(async () => {
    port = await freePort();
    server = await startTestServer({ config: { port, uploadLimitBytes: 64 * 1024 * 1024 } });
    ({ apiKey: owner } = await server.createUserWithKey('previewer', 'pro'));
    ({ apiKey: stranger } = await server.createUserWithKey('stranger', 'pro'));
    sessionId = (await call(server, 'POST', '/v1/sessions/session', { apiKey: owner, json: { vcpu_count: 1, vm_lifetime_seconds: 600 } })).body.session_id;
    const form = new FormData();
    form.append('session_id', sessionId);
    form.append('remote_path', '/root/preview_app.py');
    form.append('file', new Blob([APP_SOURCE]), 'preview_app.py');
    const uploaded = await fetch(`${server.baseUrl}/v1/upload`, { method: 'POST', headers: { 'x-api-key': owner }, body: form });
    assert.equal(uploaded.status, 200, await uploaded.text());
    const started = await call(server, 'POST', '/execute', {
      apiKey: owner,
      json: {
        session_id: sessionId,
        language: 'bash',
        command: `nohup python3 /root/preview_app.py ${APP_PORT} >/tmp/app.log 2>&1 & for i in $(seq 100); do curl -s -o /dev/null localhost:${APP_PORT}/ && break; sleep 0.2; done; curl -s localhost:${APP_PORT}/`,
      },
    });
    assert.match(started.body.stdout, /page-ok/, JSON.stringify(started.body));
    const answer = await call(server, 'GET', `/v1/sessions/app-url/${sessionId}?port=${APP_PORT}`, { apiKey: owner });
    assert.equal(answer.status, 200, answer.text);
    appUrl = answer.body;
  });
  after(() => server.close());

  test('the app URL answer has every field of the spec', () => {
    assert.equal(appUrl.url, `http://127.0.0.1:${port}/v1/app/${sessionId}/${APP_PORT}/`);
    assert.equal(appUrl.direct_url, `http://${appUrl.vm_id}-${APP_PORT}.localhost:${port}/`);
    assert.match(appUrl.vm_ip, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(appUrl.port, APP_PORT);
    assert.equal(appUrl.session_id, sessionId);
    assert.equal(appUrl.status, 'active');
    assert.ok(appUrl.expires_in_seconds > 500 && appUrl.expires_in_seconds <= 600, String(appUrl.expires_in_seconds));
  });

  test('the owner reaches the app through url; the app sees its own path and no sandboxd credentials', async () => {
    const page = await fetch(appUrl.url, { headers: { 'x-api-key': owner } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /page-ok/);
    const headers = await fetch(`${appUrl.url}headers?x=1`, { headers: { 'x-api-key': owner, cookie: 'app=1; sandboxd_preview=secret' } });
    const seen = (await headers.json()) as { path: string; headers: Record<string, string[]> };
    assert.equal(seen.path, '/headers?x=1');
    assert.equal(seen.headers['x-api-key'], undefined);
    assert.deepEqual(seen.headers.cookie, ['app=1']);
    assert.deepEqual(seen.headers['x-forwarded-prefix'], [`/v1/app/${sessionId}/${APP_PORT}`]);
    // Without the trailing slash: redirected so relative links resolve under the prefix.
    const bare = await fetch(appUrl.url.replace(/\/$/, ''), { headers: { 'x-api-key': owner }, redirect: 'manual' });
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.get('location'), `/v1/app/${sessionId}/${APP_PORT}/`);
  });

  test('the owner reaches the app at / of its own host name (direct_url)', async () => {
    const host = new URL(appUrl.direct_url).host;
    const page = await rawRequest(port, '/', { host, 'x-api-key': owner });
    assert.equal(page.status, 200);
    assert.match(page.body.toString(), /page-ok/);
    const asset = await rawRequest(port, '/asset.js', { host, 'x-api-key': owner });
    assert.equal(asset.body.toString(), 'console.log("asset-ok")');
    const seen = JSON.parse((await rawRequest(port, '/headers', { host, 'x-api-key': owner })).body.toString()) as { path: string };
    assert.equal(seen.path, '/headers');
  });

  test('large bodies stream both ways byte-exact', async () => {
    const size = 16 * 1024 * 1024 + 5;
    const down = await fetch(`${appUrl.url}big?n=${size}`, { headers: { 'x-api-key': owner } });
    assert.equal(down.status, 200);
    const body = Buffer.from(await down.arrayBuffer());
    assert.equal(body.length, size);
    assert.equal(sha(body), sha(pattern(size)));
    const upload = Buffer.alloc(8 * 1024 * 1024 + 3, 0x5a);
    // A streamed request body (chunked, no length known up front).
    const stream = new ReadableStream({
      start(controller) {
        for (let offset = 0; offset < upload.length; offset += 1024 * 1024) controller.enqueue(upload.subarray(offset, offset + 1024 * 1024));
        controller.close();
      },
    });
    const up = await fetch(`${appUrl.url}echo`, { method: 'POST', headers: { 'x-api-key': owner }, body: stream, duplex: 'half' } as RequestInit);
    assert.equal(up.status, 200);
    assert.deepEqual(await up.json(), { size: upload.length, sha256: sha(upload), path: '/echo' });
  });

  test('a WebSocket echo server in the VM through the proxy (path and host name)', async () => {
    const wsUrl = appUrl.url.replace(/^http/, 'ws');
    assert.equal(await echoOnce(`${wsUrl}ws`, { 'x-api-key': owner }, 'hello'), 'echo:hello');
    assert.equal(await echoOnce(`ws://127.0.0.1:${port}/ws`, { host: new URL(appUrl.direct_url).host, 'x-api-key': owner }, 'by-host'), 'echo:by-host');
    await assert.rejects(echoOnce(`${wsUrl}ws`, {}, 'nobody'), /handshake answered 401/);
  });

  test('without credentials 401; another user 404 (by path, host name and WebSocket)', async () => {
    assert.equal((await fetch(appUrl.url)).status, 401);
    const other = await fetch(appUrl.url, { headers: { 'x-api-key': stranger } });
    assert.equal(other.status, 404);
    assert.equal(((await other.json()) as { code: string }).code, 'NOT_FOUND');
    assert.equal((await rawRequest(port, '/', { host: new URL(appUrl.direct_url).host, 'x-api-key': stranger })).status, 404);
    await assert.rejects(echoOnce(`${appUrl.url.replace(/^http/, 'ws')}ws`, { 'x-api-key': stranger }, 'x'), /handshake answered 404/);
    assert.equal((await call(server, 'GET', `/v1/sessions/app-url/${sessionId}?port=${APP_PORT}`, { apiKey: stranger })).status, 404);
    const share = await call(server, 'POST', '/v1/shares', { apiKey: stranger, json: { session_id: sessionId, port: APP_PORT, is_public: true } });
    assert.equal(share.status, 404);
  });

  test('a port nobody listens on answers 502 with a clear message', async () => {
    const res = await fetch(appUrl.url.replace(`/${APP_PORT}/`, '/9/'), { headers: { 'x-api-key': owner } });
    assert.equal(res.status, 502);
    const body = (await res.json()) as { code: string; detail: string };
    assert.equal(body.code, 'APP_PORT_UNREACHABLE');
    assert.match(body.detail, /9/);
  });

  test('private share: link → HttpOnly cookie → page, asset and WebSocket; revoked at once', async () => {
    const created = await call(server, 'POST', '/v1/shares', {
      apiKey: owner,
      json: { session_id: sessionId, port: APP_PORT, is_public: false, expires_in_seconds: 3600 },
    });
    assert.equal(created.status, 201, created.text);
    const share = created.body;
    assert.match(share.share_id, /^shr_/);
    assert.equal(share.is_public, false);
    assert.match(share.url, /\?sandboxd_token=/);
    // The link: a cookie scoped to this preview, and a redirect to the clean address.
    const first = await fetch(share.url, { redirect: 'manual' });
    assert.equal(first.status, 302);
    assert.equal(first.headers.get('location'), `/v1/app/${sessionId}/${APP_PORT}/`);
    const setCookie = first.headers.get('set-cookie') ?? '';
    assert.match(setCookie, /^sandboxd_preview=[^;]+/);
    assert.match(setCookie, /HttpOnly/i);
    assert.match(setCookie, new RegExp(`Path=/v1/app/${sessionId}/${APP_PORT}(;|$)`));
    const cookie = setCookie.split(';')[0]!;
    const page = await fetch(appUrl.url, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /page-ok/);
    const asset = await fetch(`${appUrl.url}asset.js`, { headers: { cookie } });
    assert.equal(await asset.text(), 'console.log("asset-ok")');
    assert.equal(await echoOnce(`${appUrl.url.replace(/^http/, 'ws')}ws`, { cookie }, 'shared'), 'echo:shared');
    // The cookie is for this preview only, and the app never sees it.
    const seen = (await (await fetch(`${appUrl.url}headers`, { headers: { cookie } })).json()) as { headers: Record<string, string[]> };
    assert.equal(seen.headers.cookie, undefined);
    assert.equal((await fetch(appUrl.url.replace(`/${APP_PORT}/`, '/9/'), { headers: { cookie } })).status, 403);
    // A tampered link is refused.
    assert.equal((await fetch(`${share.url}x`, { redirect: 'manual' })).status, 403);

    const listed = await call(server, 'GET', `/v1/shares?session_id=${sessionId}`, { apiKey: owner });
    assert.ok(listed.body.shares.some((s: { share_id: string }) => s.share_id === share.share_id));
    assert.equal((await call(server, 'GET', `/v1/shares/${share.share_id}`, { apiKey: stranger })).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/shares/${share.share_id}`, { apiKey: stranger })).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/shares/${share.share_id}`, { apiKey: owner })).status, 200);
    const afterCookie = await fetch(appUrl.url, { headers: { cookie } });
    assert.equal(afterCookie.status, 403);
    assert.equal((await fetch(share.url, { redirect: 'manual' })).status, 403);
    await assert.rejects(echoOnce(`${appUrl.url.replace(/^http/, 'ws')}ws`, { cookie }, 'x'), /handshake answered 403/);
    assert.equal((await call(server, 'GET', `/v1/shares/${share.share_id}`, { apiKey: owner })).status, 404);
  });

  test('private share by host name: the link sets a host cookie', async () => {
    const share = (await call(server, 'POST', '/v1/shares', { apiKey: owner, json: { session_id: sessionId, port: APP_PORT, is_public: false } })).body;
    const direct = new URL(share.direct_url);
    const first = await rawRequest(port, `${direct.pathname}${direct.search}`, { host: direct.host });
    assert.equal(first.status, 302);
    assert.equal(first.headers.location, '/');
    const cookie = String(first.headers['set-cookie']).split(';')[0]!;
    assert.match(String(first.headers['set-cookie']), /Path=\/(;|$)/);
    const page = await rawRequest(port, '/', { host: direct.host, cookie });
    assert.match(page.body.toString(), /page-ok/);
    await call(server, 'DELETE', `/v1/shares/${share.share_id}`, { apiKey: owner });
  });

  test('public share: anyone, without credentials, until it is deleted', async () => {
    const share = (await call(server, 'POST', '/v1/shares', { apiKey: owner, json: { session_id: sessionId, port: APP_PORT, is_public: true } })).body;
    assert.equal(share.url, appUrl.url);
    assert.equal(share.link_expires_at, null);
    const page = await fetch(appUrl.url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /page-ok/);
    assert.equal(await echoOnce(`${appUrl.url.replace(/^http/, 'ws')}ws`, {}, 'public'), 'echo:public');
    // The app's own Authorization header passes through a public share.
    const seen = (await (await fetch(`${appUrl.url}headers`, { headers: { authorization: 'Bearer app-token' } })).json()) as {
      headers: Record<string, string[]>;
    };
    assert.deepEqual(seen.headers.authorization, ['Bearer app-token']);
    await call(server, 'DELETE', `/v1/shares/${share.share_id}`, { apiKey: owner });
    assert.equal((await fetch(appUrl.url)).status, 401);
  });

  test('share input is validated', async () => {
    const bad = await call(server, 'POST', '/v1/shares', { apiKey: owner, json: { session_id: sessionId, port: 70000, is_public: true } });
    assert.equal(bad.status, 422);
    const missing = await call(server, 'POST', '/v1/shares', { apiKey: owner, json: { session_id: sessionId, port: 80 } });
    assert.equal(missing.status, 422);
    assert.equal((await call(server, 'GET', `/v1/sessions/app-url/${sessionId}?port=0`, { apiKey: owner })).status, 422);
  });

  test('a killed VM answers 410, not a hang', async () => {
    const killed = await call(server, 'POST', '/kill', { apiKey: owner, json: { session_id: sessionId } });
    assert.equal(killed.status, 200, killed.text);
    const res = await waitUntil('410 after the kill', async () => {
      const answer = await fetch(appUrl.url, { headers: { 'x-api-key': owner }, signal: AbortSignal.timeout(10_000) });
      return answer.status === 410 ? answer : null;
    });
    assert.equal(((await res.json()) as { code: string }).code, 'VM_GONE');
    const url = await call(server, 'GET', `/v1/sessions/app-url/${sessionId}?port=${APP_PORT}`, { apiKey: owner });
    assert.equal(url.body.status, 'killed');
    assert.equal(url.body.expires_in_seconds, 0);
  });
});
