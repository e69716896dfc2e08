// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * `client.customDomains` against the real server, with a DNS server on loopback answering the TXT record:
 * claim, verify (pending, then verified), read, list, delete, and the errors a caller meets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDnsServer, type DnsServer } from '../../server/test/helpers/dns-server.ts';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { NotFoundError, Sandboxd, SandboxdError, ValidationError } from '../src/index.ts';

describe('client.customDomains', () => {
  let dns: DnsServer;
  let server: TestServer;
  let client: Sandboxd;
  let other: Sandboxd;

  before(async () => {
    dns = await startDnsServer();
    server = await startTestServer({ config: { dnsServers: [dns.address] } });
    client = new Sandboxd({ baseUrl: server.baseUrl, apiKey: (await server.createUserWithKey('erin')).apiKey, maxRetries: 0 });
    other = new Sandboxd({ baseUrl: server.baseUrl, apiKey: (await server.createUserWithKey('frank')).apiKey, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
    await dns?.close();
  });

  test('create for a share, verify before and after the TXT record exists, get, list, delete', async () => {
    const session = await client.sessions.create({ vcpuCount: 1 });
    const share = await client.shares.create({ sessionId: session.id, port: 3000, isPublic: true });
    const claimed = await client.customDomains.create({ domain: 'sdk.example.com', shareId: share.share_id });
    assert.equal(claimed.status, 'pending');
    assert.deepEqual([claimed.verification.name, claimed.verification.type], ['_sandboxd-challenge.sdk.example.com', 'TXT']);

    const early = await client.customDomains.verify(claimed.id);
    assert.equal(early.status, 'pending');
    assert.match(early.last_error ?? '', /no TXT record/);
    dns.setTxt(claimed.verification.name, [claimed.verification.value]);
    const verified = await client.customDomains.verify(claimed.id);
    assert.equal(verified.status, 'verified');
    assert.equal(verified.link, null, 'a public share needs no link');

    assert.equal((await client.customDomains.get(claimed.id)).verified_at, verified.verified_at);
    assert.deepEqual(
      (await client.customDomains.list()).map((d) => d.id),
      [claimed.id],
    );
    assert.equal((await client.customDomains.delete(claimed.id)).status, 'verified');
    await assert.rejects(client.customDomains.get(claimed.id), NotFoundError);
  });

  test('a port of a session; errors: another user 404, a second claim 409, a bad domain 422', async () => {
    const session = await client.sessions.create({ vcpuCount: 1 });
    const claimed = await client.customDomains.create({ domain: 'port.example.com', sessionId: session.id, port: 8080 });
    assert.deepEqual([claimed.share_id, claimed.session_id, claimed.port], [null, session.id, 8080]);
    await assert.rejects(other.customDomains.get(claimed.id), NotFoundError);
    await assert.rejects(other.customDomains.verify(claimed.id), NotFoundError);
    await assert.rejects(other.customDomains.delete(claimed.id), NotFoundError);
    await assert.rejects(
      client.customDomains.create({ domain: 'port.example.com', sessionId: session.id, port: 8081 }),
      (error: unknown) => error instanceof SandboxdError && error.status === 409 && error.code === 'CONFLICT',
    );
    await assert.rejects(client.customDomains.create({ domain: '127.0.0.1', sessionId: session.id, port: 8081 }), ValidationError);
    // appId reaches the server as app_id: an app that is not the caller's is a 404 naming it.
    await assert.rejects(
      client.customDomains.create({ domain: 'app.example.com', appId: 'no-such-app' }),
      (error: unknown) => error instanceof NotFoundError && /app no-such-app/.test(error.message),
    );
  });
});
