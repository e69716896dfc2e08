// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * With private targets not allowed (the default), webhooks never reach loopback, private, link-local,
 * metadata, unspecified or multicast addresses: literal addresses are refused when the endpoint is
 * saved, and host names are checked after DNS resolution when a webhook is sent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { forbiddenAddressReason } from '../../src/host/forbidden-addresses.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { FAST } from './fixtures.ts';

test('address classification', () => {
  const cases: [string, string | null][] = [
    ['93.184.215.14', null],
    ['2606:4700:4700::1111', null],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['169.254.10.10', 'link-local'],
    ['fe80::1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
  ];
  for (const [address, reason] of cases) assert.equal(forbiddenAddressReason(address), reason, address);
});

describe('private targets refused (SANDBOXD_WEBHOOK_ALLOW_PRIVATE off)', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string };
  let receiver: Receiver;

  before(async () => {
    server = await startTestServer({ config: { ...FAST, webhookAllowPrivate: false, webhookMaxAttempts: 1 } });
    alice = await server.createUserWithKey('alice');
    receiver = await startReceiver();
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  test('an endpoint URL with a literal private address is refused with WEBHOOK_URL_NOT_ALLOWED', async () => {
    for (const [url, reason] of [
      [receiver.url, 'loopback'],
      ['http://[::1]:8080/', 'loopback'],
      ['http://10.0.0.7/hook', 'private'],
      ['https://100.64.1.1/hook', 'carrier-grade NAT'],
      ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
      ['http://[fd00:ec2::254]/', 'cloud metadata'],
      ['http://[::ffff:127.0.0.1]/', 'loopback'],
      ['http://0.0.0.0:8080/', 'unspecified'],
    ]) {
      const res = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey: alice.apiKey, json: { url } });
      assert.equal(res.status, 400, url);
      assert.equal(res.body.code, 'WEBHOOK_URL_NOT_ALLOWED', url);
      assert.ok(res.body.detail.includes(reason!), `${url}: ${res.body.detail}`);
      assert.match(res.body.detail, /SANDBOXD_WEBHOOK_ALLOW_PRIVATE/);
    }
    const ok = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey: alice.apiKey, json: { url: 'https://hooks.example.com/x' } });
    assert.equal(ok.status, 200);
    const patched = await call(server, 'PATCH', `/v1/webhooks/endpoints/${ok.body.id}`, { apiKey: alice.apiKey, json: { url: 'http://192.168.1.1/' } });
    assert.equal(patched.body.code, 'WEBHOOK_URL_NOT_ALLOWED', 'changing the URL is checked too');
  });

  test('a host name that resolves to a loopback address is refused at send time, and nothing is sent', async () => {
    const url = receiver.url.replace('127.0.0.1', 'localhost');
    const created = await call(server, 'POST', '/v1/webhooks/endpoints', { apiKey: alice.apiKey, json: { url } });
    assert.equal(created.status, 200, 'names are resolved when sending, not when saving');
    const delivery = await call(server, 'POST', `/v1/webhooks/endpoints/${created.body.id}/test`, { apiKey: alice.apiKey });
    assert.equal(delivery.status, 200);
    assert.equal(delivery.body.status, 'failed');
    assert.equal(delivery.body.final_http_status, null);
    assert.match(delivery.body.error_message, /localhost resolves to (127\.0\.0\.1|::1), which is a loopback address/);
    const verification = await call(server, 'POST', `/v1/webhooks/endpoints/${created.body.id}/verify`, { apiKey: alice.apiKey });
    assert.equal(verification.body.verified, false);
    assert.match(verification.body.error, /loopback/);
    assert.equal(receiver.requests.length, 0, 'the receiver on 127.0.0.1 never got a request');
  });
});
