/**
 * Security regressions of the web console's session (issue 31: L-3, L-4, the cookie and CSRF part of C-1/H-1,
 * MCP's Origin): a real server over HTTP (behind `trustProxy`, so a test can say which address and scheme a
 * request came from, as a reverse proxy does) and, for what happens in a browser, a real Chromium. No VM is
 * needed: what a VM could serve on the console's origin is played by Playwright's routing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { rawRequest } from '../helpers/raw-http.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

type User = { userId: number; apiKey: string; password: string };

/** name → value of a response's Set-Cookie lines, and the lines themselves. */
function setCookies(headers: Headers): { jar: Record<string, string>; lines: string[] } {
  const lines = headers.getSetCookie();
  const jar: Record<string, string> = {};
  for (const line of lines) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    jar[pair!.slice(0, eq)] = pair!.slice(eq + 1);
  }
  return { jar, lines };
}

describe('security: the console session', () => {
  let server: TestServer;
  let victim: User;
  let mallory: User;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  /** Signs in over plain HTTP; answers the session and CSRF cookies' values. */
  const signIn = async (body: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await call(server, 'POST', '/v1/auth/session', { json: body, headers });
    assert.equal(res.status, 200, res.text);
    const { jar } = setCookies(res.headers);
    return { session: jar.sandboxd_session!, csrf: jar.sandboxd_csrf!, body: res.body };
  };
  const asCookie = (s: { session: string; csrf: string }) => `sandboxd_session=${s.session}; sandboxd_csrf=${s.csrf}`;
  const whoAmI = async (cookie: string, headers: Record<string, string> = {}) => call(server, 'GET', '/v1/auth/session', { headers: { cookie, ...headers } });
  const keyDescriptions = async (user: User) =>
    (await call(server, 'GET', '/v1/api-keys/', { apiKey: user.apiKey })).body.map((k: { description: string }) => k.description);

  before(async () => {
    server = await startTestServer({ config: { trustProxy: true, signInMaxFailuresPerUsername: 3, signInMaxFailuresPerAddress: 6, poolSize: 0 } });
    victim = await server.createUserWithKey('victim');
    mallory = await server.createUserWithKey('mallory');
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    context = await browser.newContext();
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('L-3: sign-out revokes the console session server-side', async () => {
    const s = await signIn({ username: 'victim', password: victim.password });
    assert.equal((await whoAmI(asCookie(s))).body.username, 'victim');
    const out = await call(server, 'DELETE', '/v1/auth/session', { headers: { cookie: asCookie(s) } });
    assert.equal(out.status, 204);
    // The value captured before sign-out (what a copy of the cookie holds) no longer works, for reads or changes.
    assert.equal((await whoAmI(asCookie(s))).status, 401);
    const change = await call(server, 'POST', '/v1/api-keys/', {
      headers: { cookie: asCookie(s), 'x-csrf-token': s.csrf },
      json: { description: 'after sign-out' },
    });
    assert.equal(change.status, 401);
    assert.ok(!(await keyDescriptions(victim)).includes('after sign-out'));
  });

  test('L-3: revoking an API key revokes console sessions it started', async () => {
    const key = await call(server, 'POST', '/v1/api-keys/', { apiKey: victim.apiKey, json: { description: 'console key' } });
    assert.equal(key.status, 200, key.text);
    const withKey = await signIn({ api_key: key.body.full_key });
    const withPassword = await signIn({ username: 'victim', password: victim.password });
    assert.equal((await whoAmI(asCookie(withKey))).status, 200);
    assert.equal((await call(server, 'DELETE', `/v1/api-keys/${key.body.id}`, { apiKey: victim.apiKey })).status, 200);
    assert.equal((await whoAmI(asCookie(withKey))).status, 401, 'the session signed in with the deleted key ended');
    assert.equal((await whoAmI(asCookie(withPassword))).status, 200, 'other sessions of the user go on');

    // A key that expires (PATCH to a past date) takes its sessions with it as well.
    const second = await call(server, 'POST', '/v1/api-keys/', { apiKey: victim.apiKey, json: { description: 'short key' } });
    const withSecond = await signIn({ api_key: second.body.full_key });
    assert.equal((await whoAmI(asCookie(withSecond))).status, 200);
    const expired = await call(server, 'PATCH', `/v1/api-keys/${second.body.id}`, {
      apiKey: victim.apiKey,
      json: { expires_at: new Date(Date.now() - 1000).toISOString() },
    });
    assert.equal(expired.status, 200, expired.text);
    assert.equal((await whoAmI(asCookie(withSecond))).status, 401);
  });

  test('L-3: password sign-in is throttled per username and per address', async () => {
    const carol = await server.createUserWithKey('carol');
    const dave = await server.createUserWithKey('dave');
    const from = (address: string) => ({ 'x-forwarded-for': address });
    const session = (user: string, password: string, address: string) =>
      call(server, 'POST', '/v1/auth/session', { json: { username: user, password }, headers: from(address) });
    const assert429 = (res: Awaited<ReturnType<typeof call>>, what: string) => {
      assert.equal(res.status, 429, `${what}: ${res.text}`);
      assert.equal(res.body.code, 'RATE_LIMITED', what);
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter > 0 && retryAfter <= 900, `${what}: Retry-After ${res.headers.get('retry-after')}`);
      assert.equal(res.body.retry_after, retryAfter, what);
      assert.equal(res.headers.getSetCookie().length, 0, what);
    };

    // Per username (limit 3 here): three wrong passwords, then even the right one is refused, from anywhere and
    // through the token endpoint too. Another user from the same address is not affected.
    for (let i = 0; i < 3; i++) assert.equal((await session('carol', `wrong-${i}`, '198.51.100.7')).status, 401);
    assert429(await session('carol', carol.password, '198.51.100.7'), 'the right password during the lockout');
    assert429(await session('carol', carol.password, '192.0.2.55'), 'from another address');
    assert429(
      await call(server, 'POST', '/v1/auth/token', { form: { username: 'carol', password: carol.password }, headers: from('192.0.2.55') }),
      'POST /v1/auth/token',
    );
    // The command-line login's page checks passwords too: same lockout, shown on the page.
    const login = await call(server, 'POST', '/api/cli-auth/start', { json: { hostname: 'h', code_challenge: 'c'.repeat(43) } });
    const form = await fetch(`${server.baseUrl}/cli-auth?user_code=${login.body.user_code}`);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await form.text())![1]!;
    const page = await fetch(`${server.baseUrl}/cli-auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `sandboxd_cli_csrf=${csrf}`, ...from('192.0.2.55') },
      body: new URLSearchParams({ user_code: login.body.user_code, username: 'carol', password: carol.password, csrf_token: csrf }).toString(),
    });
    assert.equal(page.status, 429);
    assert.ok(Number(page.headers.get('retry-after')) > 0);
    assert.match(await page.text(), /Too many failed sign-ins/);
    assert.equal((await session('dave', dave.password, '198.51.100.7')).status, 200, 'another user from the same address');
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: carol.apiKey })).status, 200, "carol's API key keeps working");

    // Per address (limit 6 here): guesses spread over many usernames from one address stop there too.
    for (let i = 0; i < 6; i++) assert.equal((await session(`nobody-${i}`, 'guess-guess', '203.0.113.9')).status, 401);
    assert429(await session('dave', dave.password, '203.0.113.9'), 'a known user from the busy address');
    assert429(
      await call(server, 'POST', '/v1/auth/session', { json: { api_key: 'sbx_sk_' + 'A'.repeat(43) }, headers: from('203.0.113.9') }),
      'an API key sign-in from it',
    );
    assert.equal((await session('dave', dave.password, '192.0.2.55')).status, 200, 'the same user from another address');
  });

  test('C-1/H-1: the CSRF token is bound to the session', async () => {
    const attacker = await signIn({ api_key: mallory.apiKey });
    // The victim signs in from the console's page in Chromium.
    await page.goto(`${server.baseUrl}/sign-in`);
    const signedIn = await page.evaluate(
      async (key) =>
        (await fetch('/v1/auth/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: key }) })).status,
      victim.apiKey,
    );
    assert.equal(signedIn, 200);
    // What the console does for a change: read the CSRF cookie, echo it.
    const createKey = async (description: string) =>
      (await page.evaluate(`(async () => {
        const csrf = /(?:^|;\\s*)sandboxd_csrf=([^;]+)/.exec(document.cookie)[1];
        const r = await fetch('/v1/api-keys/', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': decodeURIComponent(csrf) }, body: JSON.stringify({ description: ${JSON.stringify(description)} }) });
        return r.status;
      })()`)) as number;

    // H-1's attacker: their own session cookie on a longer path, which the browser sends first for that path.
    await context.addCookies([{ name: 'sandboxd_session', value: attacker.session, domain: '127.0.0.1', path: '/v1/api-keys', sameSite: 'Lax' }]);
    const read = await page.evaluate(async () => (await fetch('/v1/api-keys/')).status);
    assert.equal(read, 401, "two session cookies: refused, not read as the first (the attacker's)");
    assert.equal(await createKey('shadowed'), 401, "the attacker's shadowing cookie with the victim's CSRF token is refused");

    // The binding itself: the attacker's session cookie alone, with the victim's CSRF cookie and token.
    const victimCsrf = (await context.cookies(server.baseUrl)).find((c) => c.name === 'sandboxd_csrf')!.value;
    const forged = await call(server, 'POST', '/v1/api-keys/', {
      headers: { cookie: `sandboxd_session=${attacker.session}; sandboxd_csrf=${victimCsrf}`, 'x-csrf-token': victimCsrf },
      json: { description: 'forged' },
    });
    assert.equal(forged.status, 401, forged.text);
    assert.ok(!(await keyDescriptions(mallory)).some((d: string) => d === 'shadowed' || d === 'forged'), "nothing landed in the attacker's account");

    // The victim's own pair works (the shadowing cookie gone).
    await context.clearCookies({ name: 'sandboxd_session', path: '/v1/api-keys' });
    assert.equal(await createKey('own pair'), 200);
    assert.ok((await keyDescriptions(victim)).includes('own pair'));
  });

  test('H-1: console cookies are __Host- prefixed over HTTPS', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const res = await call(server, 'POST', '/v1/auth/session', { json: { api_key: victim.apiKey }, headers: https });
    assert.equal(res.status, 200, res.text);
    const { jar, lines } = setCookies(res.headers);
    assert.deepEqual(Object.keys(jar).sort(), ['__Host-sandboxd_csrf', '__Host-sandboxd_session']);
    for (const line of lines) {
      assert.match(line, /; Path=\/;/, line);
      assert.match(line, /; Secure/, line);
      assert.doesNotMatch(line, /Domain=/i, line);
      assert.match(line, /SameSite=Strict/, line);
    }
    assert.match(
      lines.find((l) => l.startsWith('__Host-sandboxd_session='))!,
      /HttpOnly/,
    );
    assert.equal(jar['__Host-sandboxd_csrf'], res.body.csrf_token);
    const own = `__Host-sandboxd_session=${jar['__Host-sandboxd_session']}`;
    assert.equal((await whoAmI(own, https)).body.username, 'victim');

    // A tossed unprefixed cookie (any subdomain or plain-HTTP page can set one) is not read over HTTPS, even when
    // it names a live session: alone it is no credential, beside the victim's it changes nothing.
    const tossed = await signIn({ api_key: mallory.apiKey });
    assert.equal((await whoAmI(`sandboxd_session=${tossed.session}`)).body.username, 'mallory', 'control: live over HTTP');
    assert.equal((await whoAmI(`sandboxd_session=${tossed.session}`, https)).status, 401);
    assert.equal((await whoAmI(`sandboxd_session=${tossed.session}; ${own}`, https)).body.username, 'victim');
    const change = await call(server, 'POST', '/v1/api-keys/', {
      headers: { ...https, cookie: `sandboxd_session=${tossed.session}; sandboxd_csrf=${tossed.csrf}`, 'x-csrf-token': tossed.csrf },
      json: { description: 'tossed' },
    });
    assert.equal(change.status, 401);
  });

  test("L-4: the console's CSP refuses a script a VM serves on the console origin", async () => {
    await context.clearCookies();
    const fresh = await context.newPage();
    try {
      // What a tenant's public share could serve on this origin, and an HTML injection that loads it.
      const vmScript = '/v1/app/some-session/8000/evil.js';
      await fresh.route(`${server.baseUrl}${vmScript}`, (route) =>
        route.fulfill({ status: 200, contentType: 'text/javascript', body: 'window.__vmScriptRan = true;' }),
      );
      await fresh.route(`${server.baseUrl}/sign-in`, async (route) => {
        const response = await route.fetch();
        const body = (await response.text()).replace('</head>', `<script type="module" src="${vmScript}"></script><script src="${vmScript}"></script></head>`);
        await route.fulfill({ response, body });
      });
      await fresh.addInitScript(`window.__violations = [];
        document.addEventListener('securitypolicyviolation', (event) => window.__violations.push(event.effectiveDirective + ' ' + event.blockedURI));`);
      await fresh.goto(`${server.baseUrl}/sign-in`);
      // The console's own scripts run: the sign-in page renders.
      await fresh.getByLabel('Username').waitFor({ timeout: 10_000 });
      // Both injected tags were refused (or, under a policy that trusts 'self', ran).
      await fresh.waitForFunction('window.__violations.length >= 2 || window.__vmScriptRan === true', null, { timeout: 5000 });
      assert.equal(await fresh.evaluate('window.__vmScriptRan'), undefined, "the VM's script did not run");
      const violations = (await fresh.evaluate('window.__violations')) as string[];
      assert.equal(violations.length, 2, violations.join('\n'));
      assert.ok(
        violations.every((v) => v.startsWith('script-src') && v.endsWith(vmScript)),
        violations.join('\n'),
      );
    } finally {
      await fresh.close();
    }
  });

  test('MCP: POST /mcp with a foreign Origin is refused', async () => {
    const port = new URL(server.baseUrl).port;
    const message = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'origin-test', version: '1' } },
    });
    const post = (headers: Record<string, string>) =>
      rawRequest(
        Number(port),
        '/mcp',
        { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': victim.apiKey, ...headers },
        'POST',
        message,
      );
    // A DNS-rebinding page: its own name, re-pointed at this server, in both Host and Origin.
    const rebound = await post({ host: `rebind.example:${port}`, origin: `http://rebind.example:${port}` });
    assert.equal(rebound.status, 403, rebound.body.toString());
    assert.equal(rebound.json.code, 'FORBIDDEN');
    assert.equal((await post({ origin: 'https://evil.example' })).status, 403);
    assert.equal((await post({ origin: 'null' })).status, 403);
    // This server's own origin, and clients that send no Origin (not browsers), are served.
    assert.equal((await post({ origin: new URL(server.config.server.publicUrl).origin })).status, 200);
    assert.equal((await post({})).status, 200);
  });
});
