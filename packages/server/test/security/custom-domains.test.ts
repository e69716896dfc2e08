// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Security regression (issue 31, L-6): a verified custom domain keeps being served only while its TXT record
 * stays. The real server with a real authoritative DNS server on loopback (helpers/dns-server.ts), re-checks
 * every second and two misses allowed; routing is seen from outside through the Host header. No VM: a routed
 * domain answers 401 (it is served like a private preview), the API answers /healthz with 200.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { freePort } from '../helpers/ports.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const API_HOST = 'api.sandboxd-sec.net';
const DOMAIN = 'former-owner.example.com';
const RECORD = `_sandboxd-challenge.${DOMAIN}`;
const MISSES = 2;

describe('security: custom domains are re-verified (L-6)', () => {
  let dns: DnsServer;
  let server: TestServer;
  let port: number;
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs) };
  let alice: { apiKey: string; userId: number };

  /** Whether a request with the domain as Host reaches the app (401: served like a private preview) rather than the API. */
  const routed = async () => (await rawRequest(port, '/healthz', { host: DOMAIN })).status === 401;
  const tlsCheck = async () => (await call(server, 'GET', `/v1/custom-domains/tls-check?domain=${DOMAIN}`)).status;

  before(async () => {
    dns = await startDnsServer();
    port = await freePort();
    server = await startTestServer({
      clock,
      config: {
        port,
        publicUrl: `http://${API_HOST}:${port}`,
        appDomain: 'apps.sandboxd-sec.net',
        dnsServers: [dns.address],
        dnsTimeoutMs: 600,
        customDomainCheckIntervalSeconds: 1,
        customDomainReverifySeconds: 1,
        customDomainReverifyMisses: MISSES,
      },
    });
    alice = await server.createUserWithKey('domain-alice');
  });
  after(async () => {
    await server?.close();
    await dns?.close();
  });

  test('L-6: a custom domain whose TXT record is gone stops routing', async () => {
    const session = (await call(server, 'POST', '/v1/sessions/session', { apiKey: alice.apiKey, json: {} })).body.session_id;
    const created = await call(server, 'POST', '/v1/custom-domains', { apiKey: alice.apiKey, json: { domain: DOMAIN, session_id: session, port: 3000 } });
    assert.equal(created.status, 201, created.text);
    const id: string = created.body.id;
    const get = async () => (await call(server, 'GET', `/v1/custom-domains/${id}`, { apiKey: alice.apiKey })).body;
    dns.setTxt(RECORD, [created.body.verification.value]);
    assert.equal((await call(server, 'POST', `/v1/custom-domains/${id}/verify`, { apiKey: alice.apiKey })).body.status, 'verified');
    assert.equal(await routed(), true, 'the verified domain is served');
    assert.equal(await tlsCheck(), 200);

    // While the record stays, re-checks find it and nothing changes.
    const verifiedAt = (await get()).last_checked_at;
    const rechecked = await waitUntil(
      'a re-check that finds the record',
      async () => {
        const record = await get();
        return record.last_checked_at !== verifiedAt ? record : null;
      },
      10_000,
      100,
    );
    assert.deepEqual([rechecked.status, rechecked.last_error], ['verified', null]);
    assert.ok(Date.parse(rechecked.next_check_at) > Date.parse(rechecked.last_checked_at));

    // The former owner's record goes (an expired domain, a dangling delegation, a changed zone).
    dns.remove(RECORD);
    // A certificate is no longer issued for it: tls-check asks DNS again (past its one-minute reuse).
    offsetMs += 61_000;
    assert.equal(await tlsCheck(), 404);
    // One miss is not yet the end (a DNS hiccup must not take a site down)...
    const missedOnce = await waitUntil(
      'a re-check that misses the record',
      async () => {
        const record = await get();
        return record.last_error ? record : null;
      },
      10_000,
      50,
    );
    assert.equal(missedOnce.status, 'verified');
    assert.match(missedOnce.last_error, new RegExp(`not found at a re-check \\(1 of ${MISSES} in a row`));
    // ...but misses in a row fail the claim, and the domain stops being served at once.
    const failed = await waitUntil(
      'the claim to fail',
      async () => {
        const record = await get();
        return record.status === 'failed' ? record : null;
      },
      10_000,
      100,
    );
    assert.equal(failed.failure_reason, 'record_missing');
    assert.match(failed.last_error, /no longer served/);
    assert.equal(failed.next_check_at, null);
    assert.equal(await routed(), false, 'the domain is back to the API');
    assert.equal((await rawRequest(port, '/healthz', { host: DOMAIN })).status, 200);
    assert.equal(await tlsCheck(), 404);
    const events = await server.services.database.db.selectFrom('events').select(['type', 'payload']).where('subject_id', '=', id).orderBy('id').execute();
    assert.deepEqual(
      events.map((event) => event.type),
      ['custom_domain.created', 'custom_domain.verified', 'custom_domain.failed'],
    );
    assert.equal(JSON.parse(events[2]!.payload).reason, 'record_missing');
  });
});
