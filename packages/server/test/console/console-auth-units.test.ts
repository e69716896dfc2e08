/**
 * The pieces of the console's session security that need no server: cookie names and parsing, the CSRF token's
 * binding, the throttle's address key and window, the console page's nonce, the MCP Origin check. The end-to-end
 * tests are in test/security/console-auth.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { consolePolicy, withNonce } from '../../src/api/dashboard/serve.ts';
import { consoleCookieNames, isSandboxdCookieName, readSessionCookie } from '../../src/api/dashboard/session-cookies.ts';
import { readCookieValues } from '../../src/api/browser-guards.ts';
import { isOwnOrigin } from '../../src/api/routes/mcp/origin-guard.ts';
import { ConsoleSessions } from '../../src/core/auth/console-sessions.ts';
import { SignInThrottle, sourceKey } from '../../src/core/auth/sign-in-throttle.ts';
import type { AppError } from '../../src/core/errors.ts';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { insertUser } from '../../src/store/users-store.ts';

const request = (cookie: string, protocol: 'http' | 'https' = 'http') => ({ headers: { cookie }, protocol });

test('sandboxd cookie names are recognised with and without the __Host-/__Secure- prefixes', () => {
  for (const name of ['sandboxd_session', 'sandboxd_csrf', '__Host-sandboxd_session', '__Secure-sandboxd_x', '__HOST-sandboxd_csrf', 'Sandboxd_preview']) {
    assert.ok(isSandboxdCookieName(name), name);
  }
  for (const name of ['session', 'my_sandboxd_session', '__Host-session', 'sandboxd']) assert.ok(!isSandboxdCookieName(name), name);
});

test('cookie names follow the scheme: __Host- over HTTPS, bare over HTTP', () => {
  assert.deepEqual(consoleCookieNames({ protocol: 'https' }), { session: '__Host-sandboxd_session', csrf: '__Host-sandboxd_csrf' });
  assert.deepEqual(consoleCookieNames({ protocol: 'http' }), { session: 'sandboxd_session', csrf: 'sandboxd_csrf' });
});

test('the session cookie: every value of a name is seen; two different ones are ambiguous; over HTTPS a bare one is ignored', () => {
  assert.deepEqual(readCookieValues(request('a=1; sandboxd_session=x; b=2; sandboxd_session=y'), 'sandboxd_session'), ['x', 'y']);
  assert.deepEqual(readCookieValues(request('sandboxd_session=q%41'), 'sandboxd_session'), ['qA']);
  assert.equal(readSessionCookie(request('sandboxd_session=x; sandboxd_session=x')), 'x');
  assert.equal(readSessionCookie(request('sandboxd_session=x; sandboxd_session=y')), 'ambiguous');
  assert.equal(readSessionCookie(request('other=1')), null);
  assert.equal(readSessionCookie(request('sandboxd_session=tossed', 'https')), null);
  assert.equal(readSessionCookie(request('sandboxd_session=tossed; __Host-sandboxd_session=mine', 'https')), 'mine');
});

test('the throttle counts IPv4 addresses as they are and IPv6 addresses by their /64', () => {
  assert.equal(sourceKey('198.51.100.7'), '198.51.100.7');
  assert.equal(sourceKey('::ffff:198.51.100.7'), '198.51.100.7');
  assert.equal(sourceKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(sourceKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
  assert.equal(sourceKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(sourceKey('::1'), '0:0:0:0::/64');
  assert.equal(sourceKey(null), null);
});

test("the console page's scripts carry the response's nonce; the policy trusts nothing else", () => {
  const html =
    '<html><head><script type="module" src="/assets/a.js"></script><link rel="modulepreload" href="/assets/b.js"><link rel="stylesheet" href="/assets/c.css"></head></html>';
  const out = withNonce(html, 'N0nce');
  assert.match(out, /<script nonce="N0nce" type="module"/);
  assert.match(out, /<link nonce="N0nce" rel="modulepreload"/);
  assert.match(out, /<link rel="stylesheet"/);
  assert.match(out, /<meta property="csp-nonce" nonce="N0nce" \/>\s*<\/head>/);
  const policy = consolePolicy('N0nce');
  assert.match(policy, /script-src 'nonce-N0nce' 'strict-dynamic';/);
  assert.doesNotMatch(policy, /script-src[^;]*'self'/);
  assert.match(consolePolicy(null), /script-src 'none'/);
});

test("MCP's Origin check accepts only the public URL's origin", () => {
  assert.ok(isOwnOrigin('https://sbx.example.com', 'https://sbx.example.com'));
  assert.ok(isOwnOrigin('http://127.0.0.1:8080', 'http://127.0.0.1:8080'));
  for (const origin of ['https://evil.example', 'http://sbx.example.com', 'https://sbx.example.com:8443', 'null', 'garbage']) {
    assert.ok(!isOwnOrigin(origin, 'https://sbx.example.com'), origin);
  }
});

describe('against a store', () => {
  let dir: string;
  let database: Database;
  let now = Date.parse('2026-11-25T12:00:00Z');
  const clock = { now: () => new Date(now) };
  let userId: number;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-console-auth-'));
    database = await openDatabase({ dataDir: dir, databaseUrl: null });
    userId = (await insertUser(database.db, { username: 'u', passwordHash: 'x', plan: 'free', isAdmin: false, createdAt: new Date(now).toISOString() })).id;
  });
  after(async () => {
    await database.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a console session: found by its token until revoked or expired; its CSRF token is its own', async () => {
    const sessions = new ConsoleSessions(database, clock, 'k'.repeat(48), 60);
    const one = await sessions.start(userId, null);
    const two = await sessions.start(userId, null);
    assert.notEqual(one.csrfToken, two.csrfToken);
    assert.equal(sessions.csrfTokenOf(one.sessionId), one.csrfToken);
    assert.equal(
      new ConsoleSessions(database, clock, 'other-secret'.repeat(4), 60).csrfTokenOf(one.sessionId) === one.csrfToken,
      false,
      'keyed by the server secret',
    );
    assert.equal((await sessions.find(one.token))?.userId, userId);
    assert.equal(await sessions.find('x'.repeat(43)), null);
    assert.equal(await sessions.revoke(one.token), true);
    assert.equal(await sessions.find(one.token), null);
    now += 61_000;
    assert.equal(await sessions.find(two.token), null, 'expired');
  });

  test('the throttle: refused at the limit with Retry-After until the window moves on; a success clears the username', async () => {
    const throttle = new SignInThrottle(database, clock, { windowSeconds: 100, maxFailuresPerUsername: 2, maxFailuresPerSource: 3 });
    await throttle.begin('alice', '192.0.2.1');
    now += 10_000;
    await throttle.begin('alice', '192.0.2.1');
    const refused = await throttle.begin('alice', '192.0.2.2').then(
      () => null,
      (error: AppError) => error,
    );
    const codeOf = (attempt: Promise<unknown>) =>
      attempt.then(
        () => 'allowed',
        (error: AppError) => error.code,
      );
    assert.equal(refused?.code, 'RATE_LIMITED');
    assert.equal(refused?.headers['Retry-After'], '90', 'when the oldest counted failure leaves the window');
    await throttle.begin('bob', '192.0.2.1');
    assert.equal(await codeOf(throttle.begin('carol', '192.0.2.1')), 'RATE_LIMITED', 'the address is over');
    now += 91_000;
    const attempt = await throttle.begin('alice', '192.0.2.2');
    await attempt.succeeded();
    await throttle.begin('alice', '192.0.2.3');
    await throttle.begin('alice', '192.0.2.3');
    assert.equal(await codeOf(throttle.begin('alice', '192.0.2.4')), 'RATE_LIMITED');
  });
});
