// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * The server side of the web console without a VM: the cookie session (password or API key, CSRF on every
 * change), daily usage, the administrators' users and nodes, and how the console's pages are served. The
 * browser test (packages/dashboard/test/dashboard.test.ts) drives the same through Chromium with real VMs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { registerDashboard } from '../../src/api/dashboard/serve.ts';
import type { App } from '../../src/api/types.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

function cookiesOf(headers: Headers): Record<string, string> {
  const jar: Record<string, string> = {};
  for (const line of headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    jar[pair!.slice(0, eq)] = pair!.slice(eq + 1);
  }
  return jar;
}

describe('the web console API', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string; password: string };
  let root: { apiKey: string };

  before(async () => {
    server = await startTestServer();
    alice = await server.createUserWithKey('alice');
    const admin = await server.services.users.create({ username: 'root-admin', password: 'root-admin-password', isAdmin: true });
    root = { apiKey: (await server.services.apiKeys.create(admin.id, { description: 'admin' })).fullKey };
  });
  after(async () => server?.close());

  test('a password sign-in sets an HttpOnly SameSite=Strict session cookie and a CSRF cookie', async () => {
    const res = await call(server, 'POST', '/v1/auth/session', { json: { username: 'alice', password: alice.password } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.username, 'alice');
    assert.equal(res.body.is_admin, false);
    const lines = res.headers.getSetCookie();
    const session = lines.find((l) => l.startsWith('sandboxd_session='))!;
    const csrf = lines.find((l) => l.startsWith('sandboxd_csrf='))!;
    assert.match(session, /HttpOnly/);
    assert.match(session, /SameSite=Strict/);
    assert.match(session, /Path=\//);
    assert.doesNotMatch(csrf, /HttpOnly/);
    assert.equal(cookiesOf(res.headers).sandboxd_csrf, res.body.csrf_token);
  });

  test('a wrong password or key is 401 and sets no cookie', async () => {
    const wrong = await call(server, 'POST', '/v1/auth/session', { json: { username: 'alice', password: 'not-the-password' } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.getSetCookie().length, 0);
    const badKey = await call(server, 'POST', '/v1/auth/session', { json: { api_key: 'sbx_sk_not-a-real-key' } });
    assert.equal(badKey.status, 401);
    const both = await call(server, 'POST', '/v1/auth/session', { json: { username: 'alice' } });
    assert.equal(both.status, 422);
    // Another site cannot sign a visitor in (to its own account: login CSRF).
    const crossSite = await call(server, 'POST', '/v1/auth/session', {
      json: { username: 'alice', password: alice.password },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.headers.getSetCookie().length, 0);
    const fetchMetadata = await call(server, 'POST', '/v1/auth/session', { json: { api_key: alice.apiKey }, headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(fetchMetadata.status, 403);
  });

  test('with the cookie, reads work alone and changes need the CSRF header', async () => {
    const signIn = await call(server, 'POST', '/v1/auth/session', { json: { api_key: alice.apiKey } });
    assert.equal(signIn.status, 200, signIn.text);
    const jar = cookiesOf(signIn.headers);
    assert.ok(!jar.sandboxd_session!.includes(alice.apiKey), 'the cookie holds a token, not the key');
    const cookie = `sandboxd_session=${jar.sandboxd_session}; sandboxd_csrf=${jar.sandboxd_csrf}`;

    const me = await call(server, 'GET', '/v1/auth/session', { headers: { cookie } });
    assert.equal(me.status, 200);
    assert.equal(me.body.user_id, alice.userId);

    const noHeader = await call(server, 'POST', '/v1/api-keys/', { headers: { cookie }, json: { description: 'via cookie' } });
    assert.equal(noHeader.status, 401);
    assert.match(noHeader.body.detail, /X-CSRF-Token/);
    const otherToken = await call(server, 'POST', '/v1/api-keys/', {
      headers: { cookie, 'x-csrf-token': 'A'.repeat(43) },
      json: { description: 'via cookie' },
    });
    assert.equal(otherToken.status, 401);
    // The token is checked against the session the cookie names (it is derived from it), not against the CSRF cookie.
    const headerOnly = await call(server, 'POST', '/v1/api-keys/', {
      headers: { cookie: `sandboxd_session=${jar.sandboxd_session}`, 'x-csrf-token': jar.sandboxd_csrf! },
      json: {},
    });
    assert.equal(headerOnly.status, 200, headerOnly.text);
    const ok = await call(server, 'POST', '/v1/api-keys/', { headers: { cookie, 'x-csrf-token': jar.sandboxd_csrf! }, json: { description: 'via cookie' } });
    assert.equal(ok.status, 200, ok.text);

    const out = await call(server, 'DELETE', '/v1/auth/session', { headers: { cookie } });
    assert.equal(out.status, 204);
    assert.ok(out.headers.getSetCookie().every((l) => /Max-Age=0/.test(l)));
    // A header credential still wins over a cookie, as before.
    assert.equal((await call(server, 'GET', '/v1/auth/session', { apiKey: alice.apiKey, headers: { cookie: 'sandboxd_session=garbage' } })).status, 200);
    assert.equal((await call(server, 'GET', '/v1/auth/session', { headers: { cookie: 'sandboxd_session=garbage' } })).status, 401);
  });

  test('daily usage: one entry per day, today last, zeros without use', async () => {
    const res = await call(server, 'GET', '/v1/usage?days=7', { apiKey: alice.apiKey });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.days.length, 7);
    assert.equal(res.body.days.at(-1).date, new Date().toISOString().slice(0, 10));
    assert.deepEqual(res.body.days[0], {
      date: res.body.days[0].date,
      executions: 0,
      vm_seconds: 0,
      cpu_seconds: 0,
      egress_attempts: 0,
      egress_refused: 0,
      egress_bytes_sent: 0,
      egress_bytes_received: 0,
      vault_substituted: 0,
      vault_flagged: 0,
    });
    assert.equal((await call(server, 'GET', '/v1/usage?days=91', { apiKey: alice.apiKey })).status, 422);
    assert.equal((await call(server, 'GET', '/v1/usage')).status, 401);
  });

  test('users and nodes are for administrators only', async () => {
    for (const url of ['/v1/admin/users', '/v1/admin/nodes']) {
      assert.equal((await call(server, 'GET', url, { apiKey: alice.apiKey })).status, 403, url);
      assert.equal((await call(server, 'GET', url)).status, 401, url);
    }
    const users = await call(server, 'GET', '/v1/admin/users', { apiKey: root.apiKey });
    assert.equal(users.status, 200, users.text);
    assert.deepEqual(users.body.users.map((u: any) => [u.username, u.is_admin]).sort(), [
      ['alice', false],
      ['root-admin', true],
    ]);
    assert.ok(users.body.plans.includes(users.body.default_plan));
    assert.ok(!users.text.includes('password'), 'no password hash');
    const nodes = await call(server, 'GET', '/v1/admin/nodes', { apiKey: root.apiKey });
    assert.equal(nodes.status, 200, nodes.text);
    assert.equal(nodes.body.nodes.length, 1);
    assert.equal(nodes.body.nodes[0].state, 'live');
    assert.equal(nodes.body.nodes[0].this_node, true, "the admin listener's own record: GET /workers");
  });

  test("the console's pages answer with its index.html (or how to build it); API paths are unchanged", async () => {
    for (const url of ['/', '/sandboxes', '/sandboxes/some-id', '/keys', '/cli-login']) {
      const res = await fetch(server.baseUrl + url, { redirect: 'manual' });
      if (url === '/cli-login' && res.status === 302) continue; // the console is not built: the server-rendered page
      assert.equal(res.status, 200, url);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      // Scripts by per-response nonce only: 'self' would admit what VMs serve under /v1/app/ (security/console-auth.test.ts).
      assert.match(res.headers.get('content-security-policy') ?? '', /script-src ('nonce-[\w-]+' 'strict-dynamic'|'none');/);
      assert.equal(res.headers.get('x-frame-options'), 'DENY');
    }
    assert.equal((await call(server, 'GET', '/healthz')).status, 200);
    assert.equal((await call(server, 'POST', '/execute', { json: { code: '1' } })).status, 401);
    const doc = await call(server, 'GET', '/openapi.json');
    assert.equal(doc.body.paths['/sandboxes'], undefined, 'console pages are not API operations');
    assert.ok(doc.body.paths['/v1/auth/session'].post);
  });

  test('without a built console the server still serves: / says how to build it, the CLI login goes to /cli-auth', async () => {
    const bare = Fastify() as unknown as App;
    await registerDashboard(bare, { distDir: '/nonexistent/dashboard/dist' });
    const index = await bare.inject({ method: 'GET', url: '/' });
    assert.equal(index.statusCode, 200);
    assert.match(index.body, /node scripts\/build-dashboard\.mjs/);
    const login = await bare.inject({ method: 'GET', url: '/cli-login?user_code=ABCD-EFGH' });
    assert.equal(login.statusCode, 302);
    assert.equal(login.headers.location, '/cli-auth?user_code=ABCD-EFGH');
    await bare.close();
  });
});
