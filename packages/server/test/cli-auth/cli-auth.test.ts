// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * The command-line login over HTTP: start → approve → exchange once, every refusal with its stable code,
 * device codes stored only as hashes, polling limits, expiry, and the server-rendered approval page with
 * its CSRF protection and audit trail.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

/** A PKCE pair (S256). */
function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Real time plus an offset the test can move. */
function movableClock() {
  let offsetMs = 0;
  return { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => (offsetMs += ms) };
}

describe('command-line login (device authorization with PKCE)', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string; password: string };
  let bob: { userId: number; apiKey: string; password: string };
  const clock = movableClock();

  before(async () => {
    server = await startTestServer({ clock, config: { cliAuthIntervalSeconds: 1, cliAuthTtlSeconds: 120 } });
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
  });
  after(() => server.close());

  async function start(hostname = 'laptop') {
    const pair = pkce();
    const res = await call(server, 'POST', '/api/cli-auth/start', { json: { hostname, code_challenge: pair.challenge, code_challenge_method: 'S256' } });
    assert.equal(res.status, 200, res.text);
    return {
      ...pair,
      ...(res.body as {
        device_code: string;
        user_code: string;
        verification_uri: string;
        verification_uri_complete: string;
        expires_in: number;
        interval: number;
      }),
    };
  }
  const exchange = (deviceCode: string, verifier: string) =>
    call(server, 'POST', '/api/cli-auth/exchange', { json: { device_code: deviceCode, code_verifier: verifier } });
  const approve = (userCode: string, apiKey: string, deny = false) =>
    call(server, 'POST', '/api/cli-auth/approve', { apiKey, json: { user_code: userCode, ...(deny ? { deny: true } : {}) } });
  /** Lets the poll interval pass without sleeping. */
  const waitInterval = () => clock.advance(1100);

  test('start answers a device code, a short user code and the approval page of this server', async () => {
    const login = await start();
    assert.match(login.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.ok(login.device_code.length >= 43);
    assert.equal(login.verification_uri, `${server.baseUrl}/cli-login`, 'the approval page of the web console');
    assert.equal(login.verification_uri_complete, `${server.baseUrl}/cli-login?user_code=${login.user_code}`);
    assert.equal(login.expires_in, 120);
    assert.equal(login.interval, 1);
    assert.ok(!login.verification_uri_complete.includes(login.device_code), 'the secret never goes into a URL');
  });

  test('device codes are stored only as hashes', async () => {
    const login = await start();
    const rows = await server.services.database.db.selectFrom('cli_auth_requests').selectAll().execute();
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(login.device_code));
    assert.ok(dump.includes(createHash('sha256').update(login.device_code).digest('hex')));
  });

  test('start refuses a missing or non-S256 challenge (422)', async () => {
    const plain = await call(server, 'POST', '/api/cli-auth/start', {
      json: { hostname: 'x', code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
    });
    assert.equal(plain.status, 422);
    const short = await call(server, 'POST', '/api/cli-auth/start', { json: { hostname: 'x', code_challenge: 'abc' } });
    assert.equal(short.status, 422);
    assert.equal(short.body.detail[0].loc.join('.'), 'body.code_challenge');
  });

  test('pending, then slow_down when polled faster than the interval, then the key exactly once', async () => {
    const login = await start('build-box');
    const pending = await exchange(login.device_code, login.verifier);
    assert.equal(pending.status, 400);
    assert.equal(pending.body.code, 'CLI_AUTH_PENDING');
    assert.equal(pending.body.error, 'authorization_pending');

    const tooFast = await exchange(login.device_code, login.verifier);
    assert.equal(tooFast.body.code, 'CLI_AUTH_SLOW_DOWN');
    assert.equal(tooFast.body.error, 'slow_down');
    assert.equal(tooFast.body.interval, 6, 'the interval grows by 5 s');

    const approved = await approve(login.user_code.toLowerCase().replace('-', ''), alice.apiKey);
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual(
      { status: approved.body.status, user_code: approved.body.user_code, hostname: approved.body.hostname },
      { status: 'approved', user_code: login.user_code, hostname: 'build-box' },
    );

    const first = await exchange(login.device_code, login.verifier);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.user_id, alice.userId);
    assert.equal(first.body.username, 'alice');
    assert.equal(first.body.description, 'CLI - build-box');
    assert.match(first.body.api_key, /^sbx_sk_/);
    assert.equal(first.body.key_prefix, first.body.api_key.slice(0, 15));

    const keys = await call(server, 'GET', '/v1/api-keys/', { apiKey: first.body.api_key });
    assert.equal(keys.status, 200, 'the new key works');
    assert.ok(keys.body.some((k: any) => k.id === first.body.api_key_id && k.description === 'CLI - build-box'));

    const replay = await exchange(login.device_code, login.verifier);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.code, 'CLI_AUTH_ALREADY_USED');
    assert.equal(replay.body.error, 'invalid_grant');
  });

  test('two exchanges racing for one approved login: one key', async () => {
    const login = await start();
    await approve(login.user_code, alice.apiKey);
    const answers = await Promise.all([1, 2, 3, 4].map(() => exchange(login.device_code, login.verifier)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400, 400, 400]);
  });

  test('a wrong verifier and an unknown device code are refused without revealing anything', async () => {
    const login = await start();
    await approve(login.user_code, alice.apiKey);
    const wrong = await exchange(login.device_code, pkce().verifier);
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.code, 'CLI_AUTH_INVALID_VERIFIER');
    assert.equal(wrong.body.api_key, undefined);
    const unknown = await exchange(randomBytes(32).toString('base64url'), login.verifier);
    assert.equal(unknown.body.code, 'CLI_AUTH_UNKNOWN_CODE');
    const right = await exchange(login.device_code, login.verifier);
    assert.equal(right.status, 200, 'a wrong verifier does not burn the login');
  });

  test('denied: the exchange says so; the decision cannot be changed', async () => {
    const login = await start();
    const denied = await approve(login.user_code, alice.apiKey, true);
    assert.equal(denied.body.status, 'denied');
    waitInterval();
    const res = await exchange(login.device_code, login.verifier);
    assert.equal(res.body.code, 'CLI_AUTH_DENIED');
    assert.equal(res.body.error, 'access_denied');
    const again = await approve(login.user_code, alice.apiKey);
    assert.equal(again.status, 409);
  });

  test('expired: neither approve nor exchange work after the lifetime', async () => {
    const login = await start();
    clock.advance(121_000);
    const approveLate = await approve(login.user_code, alice.apiKey);
    assert.equal(approveLate.status, 400);
    assert.equal(approveLate.body.code, 'CLI_AUTH_EXPIRED');
    const exchangeLate = await exchange(login.device_code, login.verifier);
    assert.equal(exchangeLate.body.code, 'CLI_AUTH_EXPIRED');
    assert.equal(exchangeLate.body.error, 'expired_token');
  });

  test('approve needs a signed-in user; unknown codes are 404; a bearer token from /v1/auth/token works', async () => {
    const login = await start();
    const anonymous = await call(server, 'POST', '/api/cli-auth/approve', { json: { user_code: login.user_code } });
    assert.equal(anonymous.status, 401);
    const unknown = await approve('BBBB-BBBB', alice.apiKey);
    assert.equal(unknown.status, 404);
    const token = await call(server, 'POST', '/v1/auth/token', { form: { username: 'bob', password: bob.password } });
    const approved = await call(server, 'POST', '/api/cli-auth/approve', { bearer: token.body.access_token, json: { user_code: login.user_code } });
    assert.equal(approved.status, 200, approved.text);
    const key = await exchange(login.device_code, login.verifier);
    assert.equal(key.body.user_id, bob.userId, "the key belongs to the approver's account");
  });

  test('approvals are in the audit log', async () => {
    const res = await call(server, 'GET', '/v1/audit/events?action=cli_auth.approve', { apiKey: alice.apiKey });
    assert.equal(res.status, 200, res.text);
    const entry = res.body.items[0];
    assert.equal(entry.action, 'cli_auth.approve');
    assert.equal(entry.user_id, alice.userId);
    assert.equal(entry.target_type, 'cli_auth');
    assert.equal(typeof entry.detail.hostname, 'string');
  });

  describe('the approval page', () => {
    async function openPage(userCode: string) {
      const res = await fetch(`${server.baseUrl}/cli-auth?user_code=${encodeURIComponent(userCode)}`);
      const html = await res.text();
      const cookie = /^(sandboxd_cli_csrf=[^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
      const token = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
      return { res, html, cookie: cookie!, token: token! };
    }
    function submit(fields: Record<string, string>, headers: Record<string, string> = {}) {
      return fetch(`${server.baseUrl}/cli-auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
        redirect: 'manual',
      });
    }

    test('shows the login with a fresh CSRF token, and cannot be framed or cached', async () => {
      const login = await start('page-host');
      const page = await openPage(login.user_code);
      assert.equal(page.res.status, 200);
      assert.match(page.res.headers.get('content-type') ?? '', /text\/html/);
      assert.match(page.html, /page-host/);
      assert.match(page.html, new RegExp(login.user_code));
      assert.ok(page.cookie && page.token && page.cookie.endsWith(page.token));
      assert.match(page.res.headers.get('set-cookie')!, /HttpOnly/);
      assert.match(page.res.headers.get('set-cookie')!, /SameSite=Strict/);
      assert.equal(page.res.headers.get('x-frame-options'), 'DENY');
      assert.match(page.res.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      assert.equal(page.res.headers.get('cache-control'), 'no-store');
      const second = await openPage(login.user_code);
      assert.notEqual(second.token, page.token, 'a new token per request');
    });

    test('a hostname cannot inject markup into the page', async () => {
      const login = await start('<script>alert(1)</script>');
      const page = await openPage(login.user_code);
      assert.ok(!page.html.includes('<script>alert(1)</script>'));
      assert.match(page.html, /&lt;script&gt;/);
    });

    test('a post without the matching token, or from another origin, is refused (403)', async () => {
      const login = await start();
      const page = await openPage(login.user_code);
      const fields = { csrf_token: page.token, user_code: login.user_code, username: 'alice', password: alice.password, decision: 'approve' };
      assert.equal((await submit(fields)).status, 403, 'no cookie');
      assert.equal((await submit(fields, { cookie: 'sandboxd_cli_csrf=something-else' })).status, 403, 'cookie and token differ');
      assert.equal((await submit(fields, { cookie: page.cookie, origin: 'https://evil.example' })).status, 403, 'cross-origin');
      assert.equal((await submit(fields, { cookie: page.cookie, 'sec-fetch-site': 'cross-site' })).status, 403, 'cross-site fetch metadata');
      waitInterval();
      const still = await exchange(login.device_code, login.verifier);
      assert.equal(still.body.code, 'CLI_AUTH_PENDING', 'nothing was approved');
    });

    test('a wrong password re-renders the form (401); the right one approves as that user', async () => {
      const login = await start('page-approve');
      let page = await openPage(login.user_code);
      const wrong = await submit(
        { csrf_token: page.token, user_code: login.user_code, username: 'alice', password: 'not-her-password', decision: 'approve' },
        { cookie: page.cookie, origin: server.baseUrl },
      );
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /Incorrect username or password/);

      page = await openPage(login.user_code);
      const right = await submit(
        { csrf_token: page.token, user_code: login.user_code, username: 'alice', password: alice.password, decision: 'approve' },
        { cookie: page.cookie, origin: server.baseUrl },
      );
      assert.equal(right.status, 200);
      assert.match(await right.text(), /Login approved/);
      const key = await exchange(login.device_code, login.verifier);
      assert.equal(key.status, 200, key.text);
      assert.equal(key.body.username, 'alice');

      const audit = await call(server, 'GET', '/v1/audit/events', { apiKey: alice.apiKey });
      const approval = audit.body.items.find((e: any) => e.action === 'cli_auth.approve' && e.detail.hostname === 'page-approve');
      assert.equal(approval.via, 'password');
      assert.ok(
        audit.body.items.some((e: any) => e.action === 'auth.sign_in' && e.outcome === 'failure'),
        'the failed sign-in is audited',
      );
    });

    test('deny from the page', async () => {
      const login = await start();
      const page = await openPage(login.user_code);
      const res = await submit(
        { csrf_token: page.token, user_code: login.user_code, username: 'bob', password: bob.password, decision: 'deny' },
        { cookie: page.cookie },
      );
      assert.equal(res.status, 200);
      assert.match(await res.text(), /Login denied/);
      waitInterval();
      assert.equal((await exchange(login.device_code, login.verifier)).body.code, 'CLI_AUTH_DENIED');
    });

    test('an unknown code shows the code form (404)', async () => {
      const page = await openPage('ZZZZ-ZZZZ');
      assert.equal(page.res.status, 404);
      assert.match(page.html, /No login has the code/);
      assert.match(page.html, /name="user_code"/);
    });

    test('the page is not part of the API document', async () => {
      const doc = await call(server, 'GET', '/openapi.json');
      assert.equal(doc.body.paths['/cli-auth'], undefined);
      assert.ok(doc.body.paths['/api/cli-auth/exchange'].post);
    });
  });
});
