// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Custom domains through the HTTP API, verified against a real authoritative DNS server on loopback
 * (helpers/dns-server.ts): claims and their TXT records, verification failing and then succeeding, the
 * background checker, expiry, the second claimant, ownership (404 for everyone else), validation, the TLS
 * "ask" endpoint, and how Host headers are routed (no VM here: the routing test with a VM is
 * custom-domain-routing.test.ts). Ends with two nodes on one store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { freePort } from '../helpers/ports.ts';
import { waitUntil } from '../helpers/wait.ts';

/** Real time plus an offset the test can move (for expiry). */
function movableClock() {
  let offsetMs = 0;
  return { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => (offsetMs += ms) };
}

const API_HOST = 'api.sandboxd-test.net';
const APP_DOMAIN = 'apps.sandboxd-test.net';

describe('custom domains (API, DNS verification, no VM)', () => {
  let dns: DnsServer;
  let server: TestServer;
  let port: number;
  const clock = movableClock();
  let alice: { userId: number; apiKey: string };
  let bob: { userId: number; apiKey: string };
  let carol: { userId: number; apiKey: string };
  let aliceSession: string;
  let aliceShare: string;
  let bobSession: string;
  let carolSession: string;

  const as = (user: { apiKey: string }) => ({ apiKey: user.apiKey });
  const claim = (user: { apiKey: string }, json: Record<string, unknown>) => call(server, 'POST', '/v1/custom-domains', { ...as(user), json });
  const get = (user: { apiKey: string }, id: string) => call(server, 'GET', `/v1/custom-domains/${id}`, as(user));
  const verify = (user: { apiKey: string }, id: string) => call(server, 'POST', `/v1/custom-domains/${id}/verify`, as(user));
  /** Alice's claim of a domain. */
  const mine = async (domain: string) => {
    const found = (await call(server, 'GET', '/v1/custom-domains', as(alice))).body.custom_domains.find((d: { domain: string }) => d.domain === domain);
    assert.ok(found, `alice has a claim of ${domain}`);
    return found;
  };
  const eventsOf = async (domainId: string) =>
    (
      await server.services.database.db.selectFrom('events').select(['type', 'payload', 'user_id']).where('subject_id', '=', domainId).orderBy('id').execute()
    ).map((e) => ({
      type: e.type,
      userId: e.user_id,
      data: JSON.parse(e.payload) as Record<string, unknown>,
    }));

  before(async () => {
    dns = await startDnsServer();
    port = await freePort();
    server = await startTestServer({
      clock,
      config: {
        port,
        publicUrl: `http://${API_HOST}:${port}`,
        appDomain: APP_DOMAIN,
        dnsServers: [dns.address],
        dnsTimeoutMs: 600,
        customDomainCheckIntervalSeconds: 1,
      },
    });
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
    carol = await server.createUserWithKey('carol');
    const newSession = async (user: { apiKey: string }) =>
      (await call(server, 'POST', '/v1/sessions/session', { ...as(user), json: {} })).body.session_id as string;
    aliceSession = await newSession(alice);
    bobSession = await newSession(bob);
    carolSession = await newSession(carol);
    const share = await call(server, 'POST', '/v1/shares', { ...as(alice), json: { session_id: aliceSession, port: 8000, is_public: false } });
    assert.equal(share.status, 201, share.text);
    aliceShare = share.body.share_id;
  });
  after(async () => {
    await server?.close();
    await dns?.close();
  });

  test('a claim answers the TXT record to create, and is pending; the name is stored in lower case', async () => {
    const created = await claim(alice, { domain: 'App.Example.COM.', share_id: aliceShare });
    assert.equal(created.status, 201, created.text);
    const record = created.body;
    assert.match(record.id, /^cd_[a-z2-7]{20}$/);
    assert.equal(record.domain, 'app.example.com');
    assert.equal(record.status, 'pending');
    assert.equal(record.failure_reason, null);
    assert.deepEqual({ share: record.share_id, session: record.session_id, port: record.port }, { share: aliceShare, session: aliceSession, port: 8000 });
    assert.equal(record.dns_provider, 'manual');
    assert.equal(record.verification.name, '_sandboxd-challenge.app.example.com');
    assert.equal(record.verification.type, 'TXT');
    assert.match(record.verification.value, /^sandboxd-verify-[a-z2-7]{32}$/);
    assert.equal(record.url, `http://app.example.com:${port}/`);
    assert.equal(record.link, null);
    assert.equal(record.verified_at, null);
    assert.equal(record.last_checked_at, null);
    const pendingDays = (Date.parse(record.expires_at) - Date.parse(record.created_at)) / 86_400_000;
    assert.equal(pendingDays, 7);
    assert.ok(Date.parse(record.next_check_at) > Date.parse(record.created_at));

    const listed = await call(server, 'GET', '/v1/custom-domains', as(alice));
    assert.deepEqual(
      listed.body.custom_domains.map((d: { id: string }) => d.id),
      [record.id],
    );
    assert.deepEqual((await get(alice, record.id)).body, record);
    assert.deepEqual(
      (await eventsOf(record.id)).map((e) => [e.type, e.data.record_value]),
      [['custom_domain.created', record.verification.value]],
    );
    const audit = await call(server, 'GET', '/v1/audit/events?action=custom_domain.create', as(alice));
    assert.equal(audit.body.items[0].target_id, record.id);
  });

  test('another user gets 404 on every operation of it, and cannot claim for a share or session of another', async () => {
    const record = await mine('app.example.com');
    for (const [method, url] of [
      ['GET', `/v1/custom-domains/${record.id}`],
      ['DELETE', `/v1/custom-domains/${record.id}`],
      ['POST', `/v1/custom-domains/${record.id}/verify`],
    ] as const) {
      const answer = await call(server, method, url, as(bob));
      assert.equal(answer.status, 404, `${method} ${url}: ${answer.text}`);
      assert.equal(answer.body.code, 'NOT_FOUND');
      assert.ok(!answer.text.includes(record.verification.value) && !answer.text.includes('app.example.com'), answer.text);
    }
    assert.deepEqual((await call(server, 'GET', '/v1/custom-domains', as(bob))).body.custom_domains, []);
    assert.equal((await claim(bob, { domain: 'bob.example.com', share_id: aliceShare })).status, 404);
    assert.equal((await claim(bob, { domain: 'bob.example.com', session_id: aliceSession, port: 8000 })).status, 404);
    assert.equal((await call(server, 'GET', `/v1/custom-domains/${record.id}`)).status, 401);
    assert.equal((await get(alice, record.id)).status, 200, 'still there');
  });

  test('bad domains, providers, credentials and targets are 422 with a clear message; nothing is stored', async () => {
    const before = (await call(server, 'GET', '/v1/custom-domains', as(alice))).body.custom_domains.length;
    const refused = async (json: Record<string, unknown>, loc: string, message: RegExp) => {
      const answer = await claim(alice, { share_id: aliceShare, ...json });
      assert.equal(answer.status, 422, `${JSON.stringify(json)}: ${answer.text}`);
      const problem = answer.body.detail.find((d: { loc: string[] }) => d.loc.join('.') === `body.${loc}`);
      assert.ok(problem, `${JSON.stringify(json)}: ${answer.text}`);
      assert.match(problem.msg, message, JSON.stringify(json));
      return answer;
    };
    await refused({ domain: '192.168.1.10' }, 'domain', /not an IP address/);
    await refused({ domain: '10.0.0.1.' }, 'domain', /not an IP address/);
    await refused({ domain: '[::1]' }, 'domain', /pattern/);
    await refused({ domain: 'localhost' }, 'domain', /pattern/);
    await refused({ domain: 'foo..example.com' }, 'domain', /pattern/);
    await refused({ domain: '-bad.example.com' }, 'domain', /pattern/);
    await refused({ domain: '*.example.com' }, 'domain', /pattern/);
    await refused({ domain: `${'a'.repeat(64)}.example.com` }, 'domain', /pattern/);
    await refused({ domain: `${'abcdefghi.'.repeat(24)}com` }, 'domain', /at most 233 characters/);
    await refused({ domain: 'example.123' }, 'domain', /top-level domain/);
    await refused({ domain: API_HOST }, 'domain', /this server's own host name/);
    await refused({ domain: APP_DOMAIN }, 'domain', /SANDBOXD_APP_DOMAIN/);
    await refused({ domain: `vm-aaaaaaaaaaaaaaaa-8000.${APP_DOMAIN}` }, 'domain', /SANDBOXD_APP_DOMAIN/);
    await refused({ domain: 'ok.example.com', dns_provider: 'route53' }, 'dns_provider', /"manual"/);
    const secret = 'AKIA-super-secret-credential-value';
    const withCredentials = await refused({ domain: 'ok.example.com', dns_credentials: { api_token: secret } }, 'dns_credentials', /none is supported yet/);
    assert.ok(!withCredentials.text.includes(secret), 'the credentials are not echoed');
    await refused({ domain: 'ok.example.com', share_id: undefined }, 'share_id', /share_id, or session_id and port/);
    await refused({ domain: 'ok.example.com', share_id: undefined, session_id: aliceSession }, 'port', /required with session_id/);
    await refused({ domain: 'ok.example.com', port: 9000 }, 'port', /the share's port \(8000\)/);
    await refused({ domain: 'ok.example.com', session_id: bobSession }, 'session_id', /the share's session/);
    await refused({ domain: 'ok.example.com', app_id: 'hello' }, 'app_id', /app_id cannot be combined with share_id: a domain serves one target/);
    await refused(
      { domain: 'ok.example.com', share_id: undefined, session_id: aliceSession, port: 8000, app_id: 'hello' },
      'app_id',
      /combined with session_id, port/,
    );
    const noApp = await claim(alice, { domain: 'ok.example.com', app_id: 'no-such-app' });
    assert.equal(noApp.status, 404, noApp.text);
    assert.match(noApp.body.message ?? noApp.text, /app no-such-app/);
    assert.equal((await call(server, 'GET', '/v1/custom-domains', as(alice))).body.custom_domains.length, before);
    // Empty credentials are no credentials; an internationalized name in its xn-- form is a name.
    const idn = await claim(alice, { domain: 'xn--bcher-kva.example', share_id: aliceShare, dns_credentials: {} });
    assert.equal(idn.status, 201, idn.text);
    assert.equal((await call(server, 'DELETE', `/v1/custom-domains/${idn.body.id}`, as(alice))).status, 200);
  });

  test('verification fails while the TXT record is missing, wrong or unreachable (with a clear last_error), and succeeds once it is there', async () => {
    const record = await mine('app.example.com');
    const missing = await verify(alice, record.id);
    assert.equal(missing.status, 200, missing.text);
    assert.equal(missing.body.status, 'pending');
    assert.match(missing.body.last_error, /no TXT record at _sandboxd-challenge\.app\.example\.com \(the name does not exist\)/);
    assert.ok(missing.body.last_checked_at);
    assert.ok(dns.queries.includes('_sandboxd-challenge.app.example.com'), 'the loopback DNS server was asked');

    dns.setTxt('_sandboxd-challenge.app.example.com', ['google-site-verification=abc', 'sandboxd-verify-somebody-elses']);
    const wrong = await verify(alice, record.id);
    assert.equal(wrong.body.status, 'pending');
    assert.match(
      wrong.body.last_error,
      /do not include this claim's verification\.value \(found "google-site-verification=abc", "sandboxd-verify-somebody-elses"\)/,
    );

    dns.mode = 'servfail';
    const failing = await verify(alice, record.id);
    assert.equal(failing.body.status, 'pending');
    assert.match(failing.body.last_error, /DNS lookup of _sandboxd-challenge\.app\.example\.com failed \(ESERVFAIL .*\); it is tried again later/);
    dns.mode = 'silent';
    const silent = await verify(alice, record.id);
    assert.match(silent.body.last_error, /no answer from 127\.0\.0\.1:\d+ within 600 ms/);
    dns.mode = 'answer';

    // Not verified yet: the TLS ask refuses it, and its Host still reaches the API.
    assert.equal((await call(server, 'GET', '/v1/custom-domains/tls-check?domain=app.example.com')).status, 404);
    const notYet = await rawRequest(port, '/', { host: 'app.example.com' });
    assert.equal(notYet.status, 404);
    assert.match(notYet.json.detail, /No route GET \/ \(app\.example\.com is a custom domain that is not verified/);
    assert.equal((await rawRequest(port, '/healthz', { host: `app.example.com:${port}` })).status, 200);

    dns.setTxt('_sandboxd-challenge.app.example.com', ['unrelated', `  ${record.verification.value} `]);
    const verified = await verify(alice, record.id);
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.status, 'verified');
    assert.ok(verified.body.verified_at);
    assert.equal(verified.body.last_error, null);
    // Its first re-check comes SANDBOXD_CUSTOM_DOMAIN_REVERIFY_SECONDS (6 h by default) after the verification.
    assert.equal(Date.parse(verified.body.next_check_at) - Date.parse(verified.body.verified_at), 6 * 3600 * 1000);
    assert.equal(verified.body.expires_at, null);
    // A private share's domain hands out a signed link for the domain itself.
    assert.match(verified.body.link, new RegExp(`^http://app\\.example\\.com:${port}/\\?sandboxd_token=[\\w.-]+$`));
    assert.ok(verified.body.link_expires_at);
    // Verified stays verified until its re-checks miss the record (security/custom-domains.test.ts): verify
    // answers without asking DNS again.
    dns.remove('_sandboxd-challenge.app.example.com');
    const asked = dns.queries.length;
    const again = await verify(alice, record.id);
    assert.equal(again.body.status, 'verified');
    assert.equal(dns.queries.length, asked);
    // The record stays where the domain is to be served: tls-check (next) looks it up again.
    dns.setTxt('_sandboxd-challenge.app.example.com', [record.verification.value]);
    assert.deepEqual(
      (await eventsOf(record.id)).map((e) => e.type),
      ['custom_domain.created', 'custom_domain.verified'],
    );
  });

  test('tls-check (no credentials) answers 200 only for verified domains', async () => {
    const ok = await call(server, 'GET', '/v1/custom-domains/tls-check?domain=APP.example.com.');
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { domain: 'app.example.com', verified: true });
    for (const domain of ['unknown.example.com', API_HOST, '127.0.0.1', 'x']) {
      assert.equal((await call(server, 'GET', `/v1/custom-domains/tls-check?domain=${encodeURIComponent(domain)}`)).status, 404, domain);
    }
    assert.equal((await call(server, 'GET', '/v1/custom-domains/tls-check')).status, 422);
  });

  test("a verified domain's Host goes to the preview, at any path; every other Host still reaches the API", async () => {
    // The share is private: no credentials is 401; the owner's key reaches the preview (no VM yet: 404 saying so).
    const anonymous = await rawRequest(port, '/v1/custom-domains', { host: 'app.example.com' });
    assert.equal(anonymous.status, 401, anonymous.body.toString());
    const owner = await rawRequest(port, '/healthz', { host: `APP.example.com:${port}`, 'x-api-key': alice.apiKey });
    assert.equal(owner.status, 404, owner.body.toString());
    assert.match(owner.json.detail, /has no VM yet/);
    const stranger = await rawRequest(port, '/', { host: 'app.example.com', 'x-api-key': bob.apiKey });
    assert.equal(stranger.status, 404);
    assert.match(stranger.json.detail, /custom domain app\.example\.com not found/);
    // X-Forwarded-Host is not trusted unless SANDBOXD_TRUST_PROXY is set.
    assert.equal((await rawRequest(port, '/healthz', { host: `127.0.0.1:${port}`, 'x-forwarded-host': 'app.example.com' })).status, 200);
    for (const host of [`127.0.0.1:${port}`, `${API_HOST}:${port}`, 'other.example.com', 'example.com']) {
      assert.equal((await rawRequest(port, '/healthz', { host })).status, 200, host);
    }
    // The internal route is not reachable by path.
    assert.equal((await rawRequest(port, '/_sandboxd/custom-domain/', { host: `127.0.0.1:${port}`, 'x-api-key': alice.apiKey })).status, 404);
  });

  test('several accounts may claim a domain while pending; the first verified wins, the others fail, and later claims are 409', async () => {
    const bobs = await claim(bob, { domain: 'shared.example.org', session_id: bobSession, port: 3000 });
    const carols = await claim(carol, { domain: 'shared.example.org', session_id: carolSession, port: 3000 });
    assert.equal(bobs.status, 201, bobs.text);
    assert.equal(carols.status, 201, carols.text);
    assert.notEqual(bobs.body.verification.value, carols.body.verification.value);
    assert.equal((await claim(bob, { domain: 'shared.example.org', session_id: bobSession, port: 3001 })).status, 409, 'one open claim per account');

    dns.setTxt('_sandboxd-challenge.shared.example.org', [carols.body.verification.value]);
    const bobTries = await verify(bob, bobs.body.id);
    assert.equal(bobTries.body.status, 'pending', "bob cannot verify with carol's record");
    const carolWins = await verify(carol, carols.body.id);
    assert.equal(carolWins.body.status, 'verified');

    const bobLost = await get(bob, bobs.body.id);
    assert.equal(bobLost.body.status, 'failed');
    assert.equal(bobLost.body.failure_reason, 'verified_elsewhere');
    assert.match(bobLost.body.last_error, /another account verified shared\.example\.org first/);
    assert.equal(bobLost.body.next_check_at, null);
    const bobVerify = await verify(bob, bobs.body.id);
    assert.equal(bobVerify.status, 409);
    assert.equal(bobVerify.body.code, 'CONFLICT');
    assert.deepEqual(
      (await eventsOf(bobs.body.id)).map((e) => [e.type, e.userId, e.data.reason ?? null]),
      [
        ['custom_domain.created', bob.userId, null],
        ['custom_domain.failed', bob.userId, 'verified_elsewhere'],
      ],
    );

    const late = await claim(alice, { domain: 'SHARED.example.org', share_id: aliceShare });
    assert.equal(late.status, 409, late.text);
    assert.match(late.body.detail, /already verified by another account/);
    // A failed claim does not block a new one of the same account (still 409 here: carol holds it).
    assert.equal((await claim(bob, { domain: 'shared.example.org', session_id: bobSession, port: 3000 })).status, 409);
    assert.equal((await call(server, 'DELETE', `/v1/custom-domains/${bobs.body.id}`, as(bob))).status, 200);
  });

  test('the background checker verifies a pending claim once its record appears (no verify call)', async () => {
    const created = await claim(alice, { domain: 'auto.example.com', session_id: aliceSession, port: 3000 });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.share_id, null);
    dns.setTxt('_sandboxd-challenge.auto.example.com', [created.body.verification.value]);
    const verified = await waitUntil(
      'the checker to verify auto.example.com',
      async () => {
        const record = (await get(alice, created.body.id)).body;
        return record.status === 'verified' ? record : null;
      },
      15_000,
      200,
    );
    assert.ok(verified.last_checked_at);
    assert.equal(verified.link, null, 'a port without a share has no link');
    assert.equal((await call(server, 'GET', '/v1/custom-domains/tls-check?domain=auto.example.com')).status, 200);
    // The routing set learned it at once on this node.
    assert.equal((await rawRequest(port, '/', { host: 'auto.example.com' })).status, 401);
  });

  test('deleting a domain stops routing at once; deleting a share deletes the domains served like it', async () => {
    const auto = await mine('auto.example.com');
    const deleted = await call(server, 'DELETE', `/v1/custom-domains/${auto.id}`, as(alice));
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(deleted.body.status, 'verified', 'answers the claim as it was');
    assert.equal((await get(alice, auto.id)).status, 404);
    assert.equal((await rawRequest(port, '/healthz', { host: 'auto.example.com' })).status, 200, 'back to the API');
    assert.equal((await call(server, 'GET', '/v1/custom-domains/tls-check?domain=auto.example.com')).status, 404);
    const audit = await call(server, 'GET', '/v1/audit/events?action=custom_domain.delete', as(alice));
    assert.equal(audit.body.items[0].target_id, auto.id);

    const app = await mine('app.example.com');
    assert.equal((await call(server, 'DELETE', `/v1/shares/${aliceShare}`, as(alice))).status, 200);
    assert.equal((await get(alice, app.id)).status, 404);
    assert.equal((await rawRequest(port, '/healthz', { host: 'app.example.com' })).status, 200);
    assert.deepEqual((await eventsOf(app.id)).at(-1), {
      type: 'custom_domain.deleted',
      userId: alice.userId,
      data: { domain_id: app.id, domain: 'app.example.com', reason: 'share_deleted', status: 'verified' },
    });
  });

  test('a claim not verified within its pending time fails as expired', async () => {
    const created = await claim(alice, { domain: 'late.example.com', session_id: aliceSession, port: 3000 });
    assert.equal(created.status, 201, created.text);
    clock.advance(7 * 86_400_000 + 1000);
    const failed = await waitUntil(
      'the checker to expire late.example.com',
      async () => {
        const record = (await get(alice, created.body.id)).body;
        return record.status === 'failed' ? record : null;
      },
      15_000,
      200,
    );
    assert.equal(failed.failure_reason, 'expired');
    assert.match(failed.last_error, /not verified within 7 days/);
    assert.equal((await verify(alice, created.body.id)).status, 409);
    // A failed claim leaves room for a new one of the same account.
    const anew = await claim(alice, { domain: 'late.example.com', session_id: aliceSession, port: 3000 });
    assert.equal(anew.status, 201, anew.text);
  });
});

describe('custom domains on two nodes of one store', () => {
  let dns: DnsServer;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    dns = await startDnsServer();
    const config = { dnsServers: [dns.address], customDomainRefreshSeconds: 1, customDomainCheckIntervalSeconds: 1 };
    a = await startTestServer({ config });
    // Node b's public host name is one that a claim verified on node a names (a configuration changed later).
    const bPort = await freePort();
    b = await startTestServer({ config: { ...config, port: bPort, publicUrl: `http://reserved-later.example.com:${bPort}` }, dataDir: a.dataDir });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await dns?.close();
  });

  test('a domain verified on one node is served by the other within the refresh; a deletion acts at once on both', async () => {
    const dave = await a.createUserWithKey('dave');
    const session = (await call(a, 'POST', '/v1/sessions/session', { apiKey: dave.apiKey, json: {} })).body.session_id;
    const created = await call(b, 'POST', '/v1/custom-domains', { apiKey: dave.apiKey, json: { domain: 'two.example.com', session_id: session, port: 3000 } });
    assert.equal(created.status, 201, created.text);
    const bPort = Number(new URL(b.baseUrl).port);
    const aPort = Number(new URL(a.baseUrl).port);
    assert.equal((await rawRequest(bPort, '/healthz', { host: 'two.example.com' })).status, 200);

    dns.setTxt('_sandboxd-challenge.two.example.com', [created.body.verification.value]);
    // Both nodes' checkers look at the claim; one of them verifies it.
    await waitUntil(
      'a checker to verify two.example.com',
      async () => (await call(a, 'GET', `/v1/custom-domains/${created.body.id}`, { apiKey: dave.apiKey })).body.status === 'verified',
      15_000,
      100,
    );
    for (const port of [aPort, bPort]) {
      await waitUntil(
        `node on ${port} to route two.example.com`,
        async () => (await rawRequest(port, '/healthz', { host: 'two.example.com' })).status === 401,
        5000,
        100,
      );
    }
    const events = await a.services.database.db.selectFrom('events').select('type').where('subject_id', '=', created.body.id).execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['custom_domain.created', 'custom_domain.verified'],
      'verified once, whichever node',
    );

    assert.equal((await call(a, 'DELETE', `/v1/custom-domains/${created.body.id}`, { apiKey: dave.apiKey })).status, 200);
    // Node b still has the name in its set until its next reload: the store answers for it at once.
    const onB = await rawRequest(bPort, '/', { host: 'two.example.com', 'x-api-key': dave.apiKey });
    assert.ok(onB.status === 404, onB.body.toString());
    assert.match(onB.json.detail, /not a verified custom domain|No route GET \//);
    await waitUntil(
      'node b to forget two.example.com',
      async () => (await rawRequest(bPort, '/healthz', { host: 'two.example.com' })).status === 200,
      5000,
      100,
    );
  });

  test("a verified domain that is a node's own host name is never routed there: the API keeps its name", async () => {
    const ivy = await a.createUserWithKey('ivy');
    const session = (await call(a, 'POST', '/v1/sessions/session', { apiKey: ivy.apiKey, json: {} })).body.session_id;
    const created = await call(a, 'POST', '/v1/custom-domains', {
      apiKey: ivy.apiKey,
      json: { domain: 'reserved-later.example.com', session_id: session, port: 3000 },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(
      (await call(b, 'POST', '/v1/custom-domains', { apiKey: ivy.apiKey, json: { domain: 'reserved-later.example.com', session_id: session, port: 3000 } }))
        .status,
      422,
    );
    dns.setTxt(created.body.verification.name, [created.body.verification.value]);
    assert.equal((await call(a, 'POST', `/v1/custom-domains/${created.body.id}/verify`, { apiKey: ivy.apiKey })).body.status, 'verified');
    const [aPort, bPort] = [Number(new URL(a.baseUrl).port), Number(new URL(b.baseUrl).port)];
    assert.equal((await rawRequest(aPort, '/healthz', { host: 'reserved-later.example.com' })).status, 401, 'node a serves it');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past node b's reload
    assert.equal((await rawRequest(bPort, '/healthz', { host: 'reserved-later.example.com' })).status, 200, 'node b answers as the API');
    assert.equal((await call(b, 'GET', '/v1/custom-domains/tls-check?domain=reserved-later.example.com')).status, 404);
  });
});

describe('custom domains behind a trusted reverse proxy (SANDBOXD_TRUST_PROXY)', () => {
  let dns: DnsServer;
  let server: TestServer;

  before(async () => {
    dns = await startDnsServer();
    server = await startTestServer({ config: { dnsServers: [dns.address], trustProxy: true } });
  });
  after(async () => {
    await server?.close();
    await dns?.close();
  });

  test('the first X-Forwarded-Host decides, as for host-name previews', async () => {
    const hana = await server.createUserWithKey('hana');
    const session = (await call(server, 'POST', '/v1/sessions/session', { apiKey: hana.apiKey, json: {} })).body.session_id;
    const created = await call(server, 'POST', '/v1/custom-domains', {
      apiKey: hana.apiKey,
      json: { domain: 'proxied.example.com', session_id: session, port: 3000 },
    });
    dns.setTxt(created.body.verification.name, [created.body.verification.value]);
    assert.equal((await call(server, 'POST', `/v1/custom-domains/${created.body.id}/verify`, { apiKey: hana.apiKey })).body.status, 'verified');
    const port = Number(new URL(server.baseUrl).port);
    const proxied = await rawRequest(port, '/healthz', { host: `127.0.0.1:${port}`, 'x-forwarded-host': 'proxied.example.com, evil.example.com' });
    assert.equal(proxied.status, 401, proxied.body.toString());
    assert.equal((await rawRequest(port, '/healthz', { host: 'proxied.example.com', 'x-forwarded-host': `127.0.0.1:${port}` })).status, 200);
  });
});
