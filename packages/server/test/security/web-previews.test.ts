/**
 * Security regressions of the web-preview surface (issue 31; the review's C-1, H-1, H-3, L-9), against real
 * VMs and a real Chromium. One server and two VMs for the whole file: a base VM whose app on port 8000 logs
 * every request's headers and answers with hostile headers, and a desktop VM whose port 6080 serves a hostile
 * viewer page instead of noVNC's files. Alice owns both (the VM's code is her prompt-injected agent); Bob is
 * another tenant who opens Alice's share. The app's log is read back through /execute.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { pino } from 'pino';
import { rawRequest } from '../helpers/raw-http.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { ORIGIN_STATE_HEADERS } from '../helpers/state-headers.ts';

const APP_SOURCE = fs.readFileSync(new URL('./fixtures/hostile_app.py', import.meta.url));
const APP_PORT = 8000;
const VIEWER_PORT = 6080;
const APP_LOG = '/tmp/requests.log';
const VIEWER_LOG = '/tmp/viewer-requests.log';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

interface User {
  userId: number;
  apiKey: string;
  password: string;
}
/** A console sign-in made from Node: the cookie pairs the server set, and the CSRF token. */
interface ConsoleCookies {
  pairs: string[];
  csrf: string;
}
/** One request as the app in the VM received it. */
interface Logged {
  method: string;
  path: string;
  headers: [string, string][];
}

/** A WebSocket handshake sent raw, answered with the response head (status line and headers). */
function upgradeHead(port: number, path: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.setTimeout(30_000, () => socket.destroy(new Error('no handshake answer within 30 s')));
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.destroy();
      resolve(received.slice(0, end));
    });
    const lines = [
      `GET ${path} HTTP/1.1`,
      `Host: ${headers.host ?? `127.0.0.1:${port}`}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Version: 13',
    ];
    for (const [name, value] of Object.entries(headers)) if (name !== 'host') lines.push(`${name}: ${value}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** The header lines of a raw response head, lower-cased names. */
function headLines(head: string): [string, string][] {
  return head
    .split('\r\n')
    .slice(1)
    .map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as [string, string]);
}

describe("web previews never lend a VM the console's authority (C-1, H-1, H-3, L-9)", { timeout: 10 * 60_000 }, () => {
  let server: TestServer;
  let alice: User;
  let bob: User;
  let sessionId: string;
  let desktopId: string;
  let appUrl: string;
  let directHost: string;
  let browser: Browser;
  let victim: BrowserContext;
  let publicShareId: string | null = null;
  let vncToken = '';
  let pageToken = '';
  const logLines: string[] = [];

  const exec = async (session: string, command: string): Promise<string> => {
    const run = await call(server, 'POST', '/execute', { apiKey: alice.apiKey, json: { session_id: session, language: 'bash', command } });
    assert.equal(run.status, 200, run.text);
    return run.body.stdout as string;
  };
  const upload = async (session: string, remotePath: string, content: Buffer): Promise<void> => {
    const form = new FormData();
    form.append('session_id', session);
    form.append('remote_path', remotePath);
    form.append('file', new Blob([content]), 'file');
    const uploaded = await fetch(`${server.baseUrl}/v1/upload`, { method: 'POST', headers: { 'x-api-key': alice.apiKey }, body: form });
    assert.equal(uploaded.status, 200, await uploaded.text());
  };
  const appLog = async (session = sessionId, file = APP_LOG): Promise<Logged[]> =>
    (await exec(session, `cat ${file} 2>/dev/null || true`))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Logged);
  const signIn = async (user: User, name: string): Promise<ConsoleCookies> => {
    const response = await fetch(`${server.baseUrl}/v1/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: name, password: user.password }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    const body = (await response.json()) as { csrf_token?: string };
    const pairs = response.headers.getSetCookie().map((line) => line.split(';', 1)[0]!);
    const csrf = body.csrf_token ?? pairs.find((pair) => /csrf/i.test(pair))?.split('=')[1] ?? '';
    return { pairs, csrf };
  };
  const bearerOf = async (name: string, user: User): Promise<string> => {
    const token = await call(server, 'POST', '/v1/auth/token', { form: { username: name, password: user.password } });
    assert.equal(token.status, 200, token.text);
    return token.body.access_token as string;
  };
  const publicShare = async (): Promise<void> => {
    if (publicShareId) return;
    const share = await call(server, 'POST', '/v1/shares', { apiKey: alice.apiKey, json: { session_id: sessionId, port: APP_PORT, is_public: true } });
    assert.equal(share.status, 201, share.text);
    publicShareId = share.body.share_id;
  };
  /** Signs the context in the way the console does: its own page posts to the sign-in API. */
  const signInBrowser = async (context: BrowserContext, name: string, user: User): Promise<void> => {
    const page = await context.newPage();
    await page.goto(`${server.baseUrl}/sign-in`);
    const status = await page.evaluate(
      `fetch('/v1/auth/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ${JSON.stringify(name)}, password: ${JSON.stringify(user.password)} }) }).then((r) => r.status)`,
    );
    assert.equal(status, 200, 'signed in through the console API');
    await page.close();
  };

  before(async () => {
    server = await startTestServer({ logger: pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) }) });
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
    const [base, desktop] = await Promise.all([
      call(server, 'POST', '/v1/sessions/session', { apiKey: alice.apiKey, json: { vcpu_count: 1, vm_lifetime_seconds: 900 } }),
      call(server, 'POST', '/v1/sessions/session', { apiKey: alice.apiKey, json: { template: 'desktop', vm_lifetime_seconds: 900 } }),
    ]);
    assert.equal(base.status, 200, base.text);
    assert.equal(desktop.status, 200, desktop.text);
    sessionId = base.body.session_id;
    desktopId = desktop.body.session_id;
    const start = (port: number, log: string) =>
      `nohup python3 /root/hostile_app.py ${port} ${log} >/tmp/app-${port}.out 2>&1 & for i in $(seq 150); do curl -s -o /dev/null localhost:${port}/ready && break; sleep 0.2; done; : > ${log}; curl -s localhost:${port}/ready; : > ${log}`;
    await Promise.all([
      (async () => {
        await upload(sessionId, '/root/hostile_app.py', APP_SOURCE);
        assert.equal(await exec(sessionId, start(APP_PORT, APP_LOG)), 'logged');
      })(),
      (async () => {
        await upload(desktopId, '/root/hostile_app.py', APP_SOURCE);
        // What the desktop's VM serves on its viewer port from now on: a page that acts as its owner.
        const stop = `pkill -f '/opt/sandboxd/desktop/[d]esktop.cjs'; for i in $(seq 50); do curl -s -o /dev/null localhost:${VIEWER_PORT}/ || break; sleep 0.1; done; `;
        assert.equal(await exec(desktopId, stop + start(VIEWER_PORT, VIEWER_LOG)), 'logged');
      })(),
    ]);
    const answer = await call(server, 'GET', `/v1/sessions/app-url/${sessionId}?port=${APP_PORT}`, { apiKey: alice.apiKey });
    assert.equal(answer.status, 200, answer.text);
    appUrl = answer.body.url;
    directHost = new URL(answer.body.direct_url).host;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    victim = await browser.newContext();
    await signInBrowser(victim, 'alice', alice);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('C-1: an app in a VM never sees a sandboxd cookie, key or bearer token (owner, private and public shares; raw HTTP and Chromium)', async () => {
    const aliceConsole = await signIn(alice, 'alice');
    const bobConsole = await signIn(bob, 'bob');
    const [aliceBearer, bobBearer] = [await bearerOf('alice', alice), await bearerOf('bob', bob)];
    const forged = [
      'sandboxd_preview=forged-preview',
      '__Host-sandboxd_session=forged-host',
      '__Secure-sandboxd_csrf=forged-secure',
      'SANDBOXD_SESSION=forged-upper',
    ];
    const secrets = [
      alice.apiKey,
      bob.apiKey,
      aliceBearer,
      bobBearer,
      ...[...aliceConsole.pairs, ...bobConsole.pairs, ...forged].map((pair) => pair.slice(pair.indexOf('=') + 1)).filter((value) => value.length >= 8),
      aliceConsole.csrf,
      bobConsole.csrf,
      'internal-signature',
    ];
    /** Everything of sandboxd's a browser or client could send, besides the app's own cookie. */
    const sandboxdHeaders = (console: ConsoleCookies): Record<string, string> => ({
      cookie: [...console.pairs, ...forged, 'app_pref=kept'].join('; '),
      'x-csrf-token': console.csrf,
      'x-sandboxd-node': 'node-1',
      'x-sandboxd-time': String(Date.now()),
      'x-sandboxd-signature': 'internal-signature',
    });
    const get = async (url: string, headers: Record<string, string>, expected = 200): Promise<void> => {
      const response = await fetch(url, { headers, redirect: 'manual' });
      assert.equal(response.status, expected, `${url}: ${await response.text()}`);
    };
    const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;
    await exec(sessionId, `: > ${APP_LOG}`);

    // The owner, with the API key and with a bearer token (the SDK's and the README's ways), HTTP and WebSocket.
    await get(`${appUrl}c1/owner-key`, { ...sandboxdHeaders(aliceConsole), 'x-api-key': alice.apiKey });
    await get(`${appUrl}c1/owner-bearer`, { ...sandboxdHeaders(aliceConsole), authorization: `Bearer ${aliceBearer}` });
    assert.match(
      await upgradeHead(server.config.server.port, `/v1/app/${sessionId}/${APP_PORT}/c1/owner-ws`, {
        ...sandboxdHeaders(aliceConsole),
        'x-api-key': alice.apiKey,
      }),
      /^HTTP\/1\.1 101/,
    );
    // By host name, as the owner.
    assert.equal(
      (
        await rawRequest(server.config.server.port, '/c1/owner-host', {
          host: directHost,
          ...sandboxdHeaders(aliceConsole),
          authorization: `Bearer ${alice.apiKey}`,
        })
      ).status,
      200,
    );

    // A private share: the link (exchanged for the preview cookie), then the cookie.
    const share = await call(server, 'POST', '/v1/shares', { apiKey: alice.apiKey, json: { session_id: sessionId, port: APP_PORT, is_public: false } });
    assert.equal(share.status, 201, share.text);
    const link = await fetch(share.body.url, { headers: sandboxdHeaders(bobConsole), redirect: 'manual' });
    assert.equal(link.status, 302);
    const previewCookie = link.headers.getSetCookie()[0]!.split(';', 1)[0]!;
    const withPreviewCookie = sandboxdHeaders(bobConsole);
    withPreviewCookie.cookie = `${previewCookie}; ${withPreviewCookie.cookie}`;
    await get(`${appUrl}c1/share-cookie`, withPreviewCookie);
    assert.match(await upgradeHead(server.config.server.port, `/v1/app/${sessionId}/${APP_PORT}/c1/share-ws`, withPreviewCookie), /^HTTP\/1\.1 101/);

    // A public share, opened by another tenant with every credential of theirs.
    await publicShare();
    await get(`${appUrl}c1/public-key`, { ...sandboxdHeaders(bobConsole), 'x-api-key': bob.apiKey });
    await get(`${appUrl}c1/public-bearer`, { ...sandboxdHeaders(bobConsole), authorization: `Bearer ${bobBearer}` });
    await get(`${appUrl}c1/public-bearer-key`, { ...sandboxdHeaders(bobConsole), authorization: `Bearer ${bob.apiKey}` });
    await get(`${appUrl}c1/public-basic-key`, { ...sandboxdHeaders(bobConsole), authorization: basic(bob.apiKey) });
    // The owner's key on a public port is the owner's, and still stays out of the VM.
    await get(`${appUrl}c1/public-owner`, { ...sandboxdHeaders(aliceConsole), 'x-api-key': alice.apiKey });
    // The app's own Authorization passes.
    await get(`${appUrl}c1/app-auth`, { authorization: 'Basic YWxpY2U6d29uZGVybGFuZA==' });

    // A signed-in browser: the share link the console shows, then the owner's app URL (public now).
    const page = await victim.newPage();
    await page.goto(share.body.url);
    await page.goto(`${appUrl}c1/chromium-public`);
    await page.close();

    const logged = await appLog();
    const seen = (suffix: string) => logged.find((entry) => entry.path.endsWith(suffix));
    for (const path of [
      'c1/owner-key',
      'c1/owner-bearer',
      'c1/owner-ws',
      '/c1/owner-host',
      'c1/share-cookie',
      'c1/share-ws',
      'c1/public-key',
      'c1/public-bearer',
      'c1/public-bearer-key',
      'c1/public-basic-key',
      'c1/public-owner',
      'c1/chromium-public',
    ]) {
      assert.ok(seen(path), `the app logged ${path}: ${JSON.stringify(logged.map((entry) => entry.path))}`);
    }
    assert.ok(
      logged.filter((entry) => entry.headers.some(([name, value]) => name.toLowerCase() === 'user-agent' && value.includes('HeadlessChrome'))).length >= 2,
      'Chromium reached the app',
    );
    for (const entry of logged) {
      const text = JSON.stringify(entry);
      for (const secret of secrets) assert.ok(!text.includes(secret), `${entry.path}: the app received a sandboxd secret (${secret.slice(0, 12)}…): ${text}`);
      for (const [name, value] of entry.headers) {
        const lower = name.toLowerCase();
        assert.ok(lower !== 'x-api-key' && lower !== 'x-csrf-token' && !lower.startsWith('x-sandboxd-'), `${entry.path}: the app received ${name}`);
        if (lower === 'cookie') {
          for (const pair of value.split(';'))
            assert.doesNotMatch(pair.trim(), /^(__host-|__secure-)?sandboxd_/i, `${entry.path}: the app received the cookie ${pair}`);
        }
      }
    }
    // The app's own cookie and Authorization are its own, byte for byte.
    assert.ok(seen('c1/owner-key')!.headers.some(([name, value]) => name.toLowerCase() === 'cookie' && value === 'app_pref=kept'));
    assert.ok(seen('c1/app-auth')!.headers.some(([name, value]) => name.toLowerCase() === 'authorization' && value === 'Basic YWxpY2U6d29uZGVybGFuZA=='));
    await call(server, 'DELETE', `/v1/shares/${share.body.share_id}`, { apiKey: alice.apiKey });
  });

  test("H-1: a VM sets no cookie or other browser state on the console's origin; on its own host name its cookies are host-only", async () => {
    await publicShare();
    // Raw HTTP: none of the state-setting headers, and the sandbox on every answer.
    const hostile = await fetch(`${appUrl}hostile?domain=127.0.0.1`);
    assert.equal(hostile.status, 200);
    assert.match(await hostile.text(), /hostile page/);
    for (const name of ORIGIN_STATE_HEADERS) assert.equal(hostile.headers.get(name), null, `${name} reached a path-preview answer`);
    assert.match(hostile.headers.get('content-security-policy') ?? '', /sandbox allow-scripts/);
    assert.doesNotMatch(hostile.headers.get('content-security-policy') ?? '', /allow-same-origin/);
    // A WebSocket handshake answer too.
    const wsHead = await upgradeHead(server.config.server.port, `/v1/app/${sessionId}/${APP_PORT}/ws-hostile?domain=127.0.0.1`, {});
    assert.match(wsHead, /^HTTP\/1\.1 101/);
    for (const [name] of headLines(wsHead)) assert.ok(!ORIGIN_STATE_HEADERS.includes(name), `${name} reached a path-preview handshake answer`);

    // Its own host name: the cookies stay, but none for the parent domain.
    const own = await rawRequest(server.config.server.port, '/hostile?domain=localhost', { host: directHost });
    assert.equal(own.status, 200);
    const cookies = ([] as string[]).concat(own.headers['set-cookie'] ?? []);
    assert.ok(
      cookies.some((cookie) => cookie.startsWith('x=1')),
      `the app's cookies pass on its own host: ${JSON.stringify(cookies)}`,
    );
    for (const cookie of cookies) assert.doesNotMatch(cookie, /domain=/i, `a host-only cookie: ${cookie}`);
    const ownWs = headLines(await upgradeHead(server.config.server.port, '/ws-hostile?domain=localhost', { host: directHost }));
    assert.ok(ownWs.some(([name, value]) => name === 'set-cookie' && value.startsWith('x=1')));
    for (const [name, value] of ownWs) if (name === 'set-cookie') assert.doesNotMatch(value, /domain=/i);

    // Chromium, signed in: visiting the page leaves the console's cookies as they were, and the console works.
    const before = await victim.cookies(server.baseUrl);
    assert.ok(before.length >= 2, 'the victim is signed in');
    const page = await victim.newPage();
    await page.goto(`${appUrl}hostile?domain=127.0.0.1`);
    await page.waitForLoadState('load');
    const shape = (cookies: { name: string; value: string; path: string; domain: string }[]) =>
      cookies.map(({ name, value, path, domain }) => `${domain}${path} ${name}=${value}`).sort();
    assert.deepEqual(shape(await victim.cookies(server.baseUrl)), shape(before), "the VM's answer changed no cookie of the console's origin");
    await page.goto(`${server.baseUrl}/sandboxes`);
    const whoami = (await page.evaluate("fetch('/v1/auth/session').then(async (r) => ({ status: r.status, body: await r.json() }))")) as {
      status: number;
      body: { username: string };
    };
    assert.equal(whoami.status, 200);
    assert.equal(whoami.body.username, 'alice');
    // Where the VM tried to shadow the session cookie by Path: still Alice's session (a shadow would be 401).
    const vaults = (await page.evaluate("fetch('/v1/vaults').then((r) => r.status)")) as number;
    assert.notEqual(vaults, 401, "the console's session is Alice's own under /v1/vaults too");
    await page.close();
  });

  test("H-3: a desktop VM's page on the viewer port never runs as its owner; the viewer link opens sandboxd's own viewer", async () => {
    const keysBefore = await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey });
    assert.equal(keysBefore.status, 200, keysBefore.text);
    const viewer = await call(server, 'GET', `/v1/computeruse/${desktopId}/viewer-url`, { apiKey: alice.apiKey });
    assert.equal(viewer.status, 200, viewer.text);
    vncToken = new URL(viewer.body.websocket_url).searchParams.get('token')!;
    pageToken = new URL(viewer.body.viewer_url).searchParams.get('sandboxd_token')!;
    assert.match(viewer.body.viewer_url, new RegExp(`/v1/app/${desktopId}/${VIEWER_PORT}/vnc\\.html\\?`));

    const page = await victim.newPage();
    const sockets: string[] = [];
    page.on('websocket', (socket) => sockets.push(socket.url()));
    await page.goto(viewer.body.viewer_url);
    // Either the VM's page finished its attempts (it marks its body), or sandboxd's viewer connected to the relay.
    // Locators, not waitForFunction: the viewer's policy forbids eval, which waitForFunction's polling uses.
    await page.locator('[data-desktop-state="connected"], body[data-outcome]').first().waitFor({ timeout: 120_000 });
    const outcome = await page.locator('body').getAttribute('data-outcome');
    assert.equal(outcome, null, `the VM's page ran as the owner: ${outcome}`);
    // (An expression string: it runs in the page, where the DOM is; CDP evaluation is not subject to the policy.)
    await waitUntil(
      "the desktop's screen on the viewer's canvas",
      async () => ((await page.evaluate("document.querySelector('#noVNC_container canvas')?.width ?? 0")) as number) > 100,
      30_000,
      200,
    );
    assert.ok(
      sockets.some((url) => url.includes(`/v1/computeruse/${desktopId}/vnc/websockify`)),
      `the viewer opened the relay: ${JSON.stringify(sockets)}`,
    );
    await page.close();

    const keysAfter = await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey });
    assert.equal(keysAfter.body.length, keysBefore.body.length, 'no API key was created');
    const consolePage = await victim.newPage();
    await consolePage.goto(`${server.baseUrl}/sandboxes`);
    assert.equal(await consolePage.evaluate('navigator.serviceWorker.getRegistrations().then((r) => r.length)'), 0, 'no service worker on the origin');
    await consolePage.close();
    // Nor does anything else a viewer link or its cookie could ask for: other paths, methods, WebSockets.
    const viewerBase = `${server.baseUrl}/v1/app/${desktopId}/${VIEWER_PORT}`;
    const exchanged = await fetch(`${viewerBase}/vnc.html?sandboxd_token=${pageToken}`, { redirect: 'manual' });
    assert.equal(exchanged.status, 302);
    const viewerCookie = exchanged.headers.getSetCookie()[0]!.split(';', 1)[0]!;
    assert.equal((await fetch(`${viewerBase}/sw.js`, { headers: { cookie: viewerCookie } })).status, 404);
    assert.equal((await fetch(`${viewerBase}/vnc.html`, { method: 'POST', headers: { cookie: viewerCookie } })).status, 404);
    assert.match(
      await upgradeHead(server.config.server.port, `/v1/app/${desktopId}/${VIEWER_PORT}/websockify?sandboxd_token=${pageToken}`, {}),
      /^HTTP\/1\.1 404/,
    );
    const served = await fetch(`${viewerBase}/vnc.html`, { headers: { cookie: viewerCookie } });
    assert.equal(served.status, 200);
    assert.match(served.headers.get('content-security-policy') ?? '', /script-src 'nonce-[^']+' 'strict-dynamic'/);
    assert.doesNotMatch(await served.text(), /hostile/);
    assert.deepEqual(await appLog(desktopId, VIEWER_LOG), [], 'nothing of the viewer link reached the VM');

    // The owner's own grant of that port still reaches the VM, like any port: sandboxed.
    const owned = await fetch(`${server.baseUrl}/v1/app/${desktopId}/${VIEWER_PORT}/vnc.html`, { headers: { 'x-api-key': alice.apiKey } });
    assert.equal(owned.status, 200);
    assert.match(await owned.text(), /hostile viewer/);
    assert.match(owned.headers.get('content-security-policy') ?? '', /sandbox allow-scripts/);
  });

  test('L-9: the request log holds no VNC token', async () => {
    assert.ok(vncToken && pageToken, 'the H-3 case loaded a viewer');
    await waitUntil('the viewer page in the log', async () => logLines.some((line) => line.includes(`/v1/app/${desktopId}/${VIEWER_PORT}/vnc.html`)));
    assert.ok(
      logLines.some((line) => line.includes('websockify')),
      'the relay handshake is logged',
    );
    for (const line of logLines) {
      assert.ok(!line.includes(vncToken), `a VNC token in the log: ${line}`);
      assert.ok(!line.includes(pageToken), `a viewer page token in the log: ${line}`);
    }
  });
});
