/**
 * The server process is killed with SIGKILL while deliveries are pending (their receiver is down); the next
 * process on the same data directory delivers every one of them, signed, with the same webhook-id.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../helpers/ports.ts';
import { startServerProcess } from '../helpers/processes.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const EVENTS = 3;

test('deliveries pending when the server is SIGKILLed all arrive after the restart', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-sigkill-'));
  const receiverPort = await freePort();
  const env = {
    SANDBOXD_DATA_DIR: dataDir,
    SANDBOXD_WEBHOOK_ALLOW_PRIVATE: 'true',
    SANDBOXD_WEBHOOK_RETRY_SCHEDULE: '300ms',
    SANDBOXD_WEBHOOK_MAX_ATTEMPTS: '100',
    SANDBOXD_WEBHOOK_TIMEOUT_MS: '1000',
    SANDBOXD_POOL_SIZE: '0',
    SANDBOXD_LOG_LEVEL: 'info',
  };
  let server = await startServerProcess(env);
  // Nothing listens on receiverPort until after the crash: every attempt before it fails.
  let liveReceiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  try {
    const adminKey = fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim();
    const api = (method: string, url: string, body?: unknown) =>
      fetch(`${server.baseUrl}${url}`, {
        method,
        headers: { 'x-api-key': adminKey, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const endpoint = await api('POST', '/v1/webhooks/endpoints', { url: `http://127.0.0.1:${receiverPort}/hook`, event_patterns: ['api_key.*'] });
    assert.equal(endpoint.status, 200, JSON.stringify(endpoint.body));
    for (let i = 0; i < EVENTS; i++) assert.equal((await api('POST', '/v1/api-keys/', { description: `k${i}` })).status, 200);
    let pending: any[] = [];
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      pending = (await api('GET', `/v1/webhooks/deliveries?endpoint_id=${endpoint.body.id}`)).body.items;
      if (pending.length === EVENTS && pending.every((d) => d.scheduled_attempt >= 2)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(pending.length, EVENTS, 'one delivery per event');
    assert.ok(
      pending.every((d) => d.status !== 'succeeded' && d.scheduled_attempt >= 2),
      'all failed at least once',
    );

    server.process.kill('SIGKILL');
    await new Promise((r) => server.process.once('exit', r));

    liveReceiver = await startReceiver(() => 200, receiverPort);
    server = await startServerProcess(env);
    // An attempt cut off by the kill leaves a lease that another node may take only after it expires
    // (attempt timeout + 15 s), so allow for that.
    const requests = await liveReceiver.waitForRequests(EVENTS, 45_000);
    const ids = new Set(requests.map((r) => r.headers['webhook-id']));
    assert.deepEqual(ids, new Set(pending.map((d) => d.event_id)), 'every pending event arrived, under its own webhook-id');
    for (const request of requests) {
      assert.doesNotThrow(() => new Webhook(endpoint.body.secret).verify(request.body, request.headers as Record<string, string>));
    }
  } finally {
    await server.stop();
    await liveReceiver?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
