/**
 * Verified custom domains serving a real VM's port (one VM for the whole file): an HTTP and WebSocket app
 * (fixtures/preview_app.py) reached by sending requests to the server with the domain as Host, with the
 * access rules of what the domain maps (a private share's link → cookie, a public share, a session's port
 * for its owner only); an unverified domain does not reach it, and deleting a domain or its share stops it.
 * DNS is a server on loopback (helpers/dns-server.ts).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { freePort } from '../helpers/ports.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const APP_SOURCE = fs.readFileSync(new URL('./fixtures/preview_app.py', import.meta.url));
const APP_PORT = 8000;

/** Opens a WebSocket to the server with `host` as Host, sends `message`, resolves with the first answer. */
function echoOnce(port: number, host: string, headers: Record<string, string>, message: string, path = '/ws'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers: { host, ...headers } });
    socket.once('open', () => socket.send(message));
    socket.once('message', (data) => {
      resolve(data.toString());
      socket.close();
    });
    socket.once('unexpected-response', (_request, response) => reject(new Error(`handshake answered ${response.statusCode}`)));
    socket.once('error', reject);
  });
}

describe('custom domains serving a VM port (real VM)', () => {
  let dns: DnsServer;
  let server: TestServer;
  let port: number;
  let owner: string;
  let stranger: string;
  let sessionId: string;
  let privateShare: string;

  /** Claims `domain` as the owner, creates its TXT record and verifies it; answers the verified record. */
  const verifiedDomain = async (domain: string, target: Record<string, unknown>) => {
    const created = await call(server, 'POST', '/v1/custom-domains', { apiKey: owner, json: { domain, ...target } });
    assert.equal(created.status, 201, created.text);
    dns.setTxt(created.body.verification.name, [created.body.verification.value]);
    const verified = await call(server, 'POST', `/v1/custom-domains/${created.body.id}/verify`, { apiKey: owner });
    assert.equal(verified.body.status, 'verified', verified.text);
    return verified.body;
  };

  before(async () => {
    dns = await startDnsServer();
    port = await freePort();
    server = await startTestServer({ config: { port, dnsServers: [dns.address] } });
    ({ apiKey: owner } = await server.createUserWithKey('domain-owner', 'pro'));
    ({ apiKey: stranger } = await server.createUserWithKey('domain-stranger', 'pro'));
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
    privateShare = (await call(server, 'POST', '/v1/shares', { apiKey: owner, json: { session_id: sessionId, port: APP_PORT, is_public: false } })).body
      .share_id;
  });
  after(async () => {
    await server?.close();
    await dns?.close();
  });

  test("a private share's domain: its signed link sets a cookie for the domain, then page, asset and WebSocket; the app sees its own paths", async () => {
    const domain = await verifiedDomain('private.example.com', { share_id: privateShare });
    assert.equal((await rawRequest(port, '/', { host: 'private.example.com' })).status, 401);
    const link = new URL(domain.link);
    assert.equal(link.host, `private.example.com:${port}`);
    const first = await rawRequest(port, `${link.pathname}${link.search}`, { host: link.host });
    assert.equal(first.status, 302);
    assert.equal(first.headers.location, '/');
    const setCookie = String(first.headers['set-cookie']);
    assert.match(setCookie, /^sandboxd_preview=[^;]+;.*Path=\/(;|$)/);
    assert.match(setCookie, /HttpOnly/i);
    const cookie = setCookie.split(';')[0]!;

    const page = await rawRequest(port, '/', { host: 'private.example.com', cookie });
    assert.equal(page.status, 200);
    assert.match(page.body.toString(), /page-ok/);
    assert.equal((await rawRequest(port, '/asset.js', { host: 'private.example.com', cookie })).body.toString(), 'console.log("asset-ok")');
    const seen = (await rawRequest(port, '/headers?x=1', { host: 'private.example.com', cookie: `${cookie}; app=1` })).json as {
      path: string;
      headers: Record<string, string[]>;
    };
    assert.equal(seen.path, '/headers?x=1');
    assert.deepEqual(seen.headers.host, ['private.example.com']);
    assert.deepEqual(seen.headers['x-forwarded-host'], ['private.example.com']);
    assert.deepEqual(seen.headers.cookie, ['app=1'], "sandboxd's cookie stays with sandboxd");
    assert.equal(seen.headers['x-forwarded-prefix'], undefined, 'served at /');
    // Every path is the app's, the API's own included.
    const apiPath = await rawRequest(port, '/v1/custom-domains', { host: 'private.example.com', cookie });
    assert.deepEqual([apiPath.status, apiPath.json], [404, { app: 'not found' }]);
    const upload = await rawRequest(port, '/echo', { host: 'private.example.com', cookie, 'content-type': 'text/plain' }, 'POST', 'hello');
    assert.equal(upload.json?.size, 5, `${upload.status} ${upload.body.toString()}`);

    assert.equal(await echoOnce(port, 'private.example.com', { cookie }, 'by-domain'), 'echo:by-domain');
    assert.equal(await echoOnce(port, 'private.example.com', { 'x-api-key': owner }, 'owner'), 'echo:owner');
    await assert.rejects(echoOnce(port, 'private.example.com', {}, 'nobody'), /handshake answered 401/);
    await assert.rejects(echoOnce(port, 'private.example.com', { 'x-api-key': stranger }, 'x'), /handshake answered 404/);
    assert.equal((await rawRequest(port, '/', { host: 'private.example.com', 'x-api-key': stranger })).status, 404);
    // The owner's key opens it too; the app never sees the key.
    const asOwner = (await rawRequest(port, '/headers', { host: 'private.example.com', 'x-api-key': owner })).json as { headers: Record<string, string[]> };
    assert.equal(asOwner.headers['x-api-key'], undefined);
  });

  test("a session's port without a share: its owner only, like a private preview (HTTP and WebSocket)", async () => {
    await verifiedDomain('owner.example.com', { session_id: sessionId, port: APP_PORT });
    assert.equal((await rawRequest(port, '/', { host: 'owner.example.com' })).status, 401);
    assert.equal((await rawRequest(port, '/', { host: 'owner.example.com', 'x-api-key': stranger })).status, 404);
    const page = await rawRequest(port, '/', { host: 'owner.example.com', 'x-api-key': owner });
    assert.equal(page.status, 200);
    assert.match(page.body.toString(), /page-ok/);
    assert.equal(await echoOnce(port, 'owner.example.com', { 'x-api-key': owner }, 'mine'), 'echo:mine');
    await assert.rejects(echoOnce(port, 'owner.example.com', {}, 'x'), /handshake answered 401/);
  });

  test('an unverified domain does not reach the VM: its Host gets the API, and a 404 says it is not verified', async () => {
    const created = await call(server, 'POST', '/v1/custom-domains', {
      apiKey: owner,
      json: { domain: 'pending.example.com', session_id: sessionId, port: APP_PORT },
    });
    assert.equal(created.body.status, 'pending');
    const page = await rawRequest(port, '/', { host: 'pending.example.com', 'x-api-key': owner });
    assert.equal(page.status, 404);
    assert.doesNotMatch(page.body.toString(), /page-ok/);
    assert.match(page.json.detail, /pending\.example\.com is a custom domain that is not verified/);
    assert.equal((await rawRequest(port, '/asset.js', { host: 'pending.example.com', 'x-api-key': owner })).status, 404);
    await assert.rejects(echoOnce(port, 'pending.example.com', { 'x-api-key': owner }, 'x'), /handshake answered 404/);
  });

  test("a public share's domain serves anyone; deleting the share deletes the domain and stops it", async () => {
    const share = (await call(server, 'POST', '/v1/shares', { apiKey: owner, json: { session_id: sessionId, port: APP_PORT, is_public: true } })).body;
    const domain = await verifiedDomain('public.example.com', { share_id: share.share_id });
    assert.equal(domain.link, null);
    const page = await rawRequest(port, '/', { host: 'public.example.com' });
    assert.equal(page.status, 200);
    assert.match(page.body.toString(), /page-ok/);
    assert.equal(await echoOnce(port, 'public.example.com', {}, 'anyone'), 'echo:anyone');

    assert.equal((await call(server, 'DELETE', `/v1/shares/${share.share_id}`, { apiKey: owner })).status, 200);
    assert.equal((await call(server, 'GET', `/v1/custom-domains/${domain.id}`, { apiKey: owner })).status, 404);
    // `/` on a Host sandboxd does not serve is the web console's page now; no path reaches the app.
    const after = await rawRequest(port, '/', { host: 'public.example.com' });
    assert.doesNotMatch(after.body.toString(), /page-ok/);
    assert.equal((await rawRequest(port, '/asset.js', { host: 'public.example.com' })).status, 404);
    await assert.rejects(echoOnce(port, 'public.example.com', {}, 'x'), /handshake answered 404/);
  });

  test('deleting a domain stops it at once, HTTP and WebSocket', async () => {
    const [domain] = (await call(server, 'GET', '/v1/custom-domains', { apiKey: owner })).body.custom_domains.filter(
      (d: { domain: string }) => d.domain === 'owner.example.com',
    );
    assert.equal((await call(server, 'DELETE', `/v1/custom-domains/${domain.id}`, { apiKey: owner })).status, 200);
    const page = await rawRequest(port, '/', { host: 'owner.example.com', 'x-api-key': owner });
    assert.doesNotMatch(page.body.toString(), /page-ok/);
    assert.equal((await rawRequest(port, '/asset.js', { host: 'owner.example.com', 'x-api-key': owner })).status, 404);
    await assert.rejects(echoOnce(port, 'owner.example.com', { 'x-api-key': owner }, 'x'), /handshake answered 404/);
    // The API's own routes answer on that Host again, as on any unknown one.
    assert.equal((await rawRequest(port, '/healthz', { host: 'owner.example.com' })).status, 200);
  });

  test('when the VM ends, the domain answers 410 VM_GONE, not anything else', async () => {
    const killed = await call(server, 'POST', '/kill', { apiKey: owner, json: { session_id: sessionId } });
    assert.equal(killed.status, 200, killed.text);
    const gone = await waitUntil(
      '410 after the kill',
      async () => {
        const answer = await rawRequest(port, '/', { host: 'private.example.com', 'x-api-key': owner });
        return answer.status === 410 ? answer : null;
      },
      10_000,
      100,
    );
    assert.equal(gone.json.code, 'VM_GONE');
    await assert.rejects(echoOnce(port, 'private.example.com', { 'x-api-key': owner }, 'x'), /handshake answered 410/);
  });
});
