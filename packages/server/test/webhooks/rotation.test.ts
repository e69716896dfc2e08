// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Secret rotation: during the grace period both secrets sign (two signatures in webhook-signature), so a
 * receiver holding either verifies; afterwards only the new one does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { createEndpoint, FAST } from './fixtures.ts';

describe('webhook secret rotation', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string };
  let receiver: Receiver;

  before(async () => {
    server = await startTestServer({ config: { ...FAST, webhookSecretGraceSeconds: 1 } });
    alice = await server.createUserWithKey('alice');
    receiver = await startReceiver();
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  const sendTest = async (endpointId: string) => {
    const res = await call(server, 'POST', `/v1/webhooks/endpoints/${endpointId}/test`, { apiKey: alice.apiKey });
    assert.equal(res.body.status, 'succeeded');
    return receiver.requests[receiver.requests.length - 1]!;
  };
  const verifies = (secret: string, request: { body: string; headers: Record<string, unknown> }) => {
    try {
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      return true;
    } catch (error) {
      if (error instanceof WebhookVerificationError) return false;
      throw error;
    }
  };

  test('both secrets sign during the grace period, only the new one after it', async () => {
    const endpoint = await createEndpoint(server, alice.apiKey, receiver.url);
    const oldSecret = endpoint.secret;
    const before = await sendTest(endpoint.id);
    assert.equal(String(before.headers['webhook-signature']).split(' ').length, 1);
    assert.ok(verifies(oldSecret, before));

    const rotated = await call(server, 'POST', `/v1/webhooks/endpoints/${endpoint.id}/rotate-secret`, { apiKey: alice.apiKey });
    assert.equal(rotated.status, 200);
    assert.deepEqual(Object.keys(rotated.body).sort(), ['endpoint_id', 'secret']);
    assert.equal(rotated.body.endpoint_id, endpoint.id);
    const newSecret = rotated.body.secret as string;
    assert.match(newSecret, /^whsec_/);
    assert.notEqual(newSecret, oldSecret);

    const during = await sendTest(endpoint.id);
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2, 'two signatures, space-separated');
    assert.ok(verifies(newSecret, during), 'the new secret verifies');
    assert.ok(verifies(oldSecret, during), 'the old secret still verifies within the grace period');

    await new Promise((resolve) => setTimeout(resolve, 1100));
    const afterGrace = await sendTest(endpoint.id);
    assert.equal(String(afterGrace.headers['webhook-signature']).split(' ').length, 1);
    assert.ok(verifies(newSecret, afterGrace));
    assert.ok(!verifies(oldSecret, afterGrace), 'the old secret no longer verifies');
  });
});
