/**
 * Bursts beyond what the host restores at once: a sync execute that could not get its new VM within its
 * timeout is refused at once with its place in the queue (429 CAPACITY_BUSY, Retry-After), with nothing made;
 * an async execute queues and says where it stands; callers that can wait are served in order. Real VMs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

describe('a burst beyond capacity queues visibly', () => {
  let server: TestServer;
  let key: string;

  before(async () => {
    // One restore at a time and no warm pool: the second VM start must wait for the first.
    server = await startTestServer({ config: { poolSize: 0, maxConcurrentRestores: 1 } });
    ({ apiKey: key } = await server.createUserWithKey('burst', 'pro'));
    await server.services.sandbox.vms.start();
  });
  after(() => server.close());

  const newSession = async () => (await call(server, 'POST', '/v1/sessions/session', { apiKey: key, json: { vcpu_count: 1 } })).body.session_id as string;

  test('while a restore runs, a 1 s sync execute gets 429 CAPACITY_BUSY with its place and nothing is made; the queued and the patient are served', async () => {
    const first = await newSession();
    const queued = await call(server, 'POST', '/v1/execute_async', { apiKey: key, json: { session_id: first, code: 'print("first")' } });
    assert.equal(queued.status, 200, queued.text);
    assert.equal(queued.body.queue_position, 0, 'nothing ahead of the first VM start');
    assert.ok(queued.body.estimated_start_seconds >= 1);

    // The first VM's restore is under way (the async execute answered before starting it).
    const engine = server.services.sandbox.engine;
    await waitUntil(
      'the first restore under way',
      async () => (engine.estimateAcquire({ vcpuCount: 1, memoryMb: 512 }).position >= 1 ? true : null),
      30_000,
      10,
    );
    const hurried = await newSession();
    const refused = await call(server, 'POST', '/execute', { apiKey: key, json: { session_id: hurried, code: 'print("hurried")', timeout: 1 } });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.code, 'CAPACITY_BUSY');
    assert.equal(refused.body.queue_position, 1);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const status = await call(server, 'GET', `/v1/sessions/status/${hurried}`, { apiKey: key });
    assert.equal(status.body.vm_assigned, false, 'no VM was started for the refused call');
    const executions = await call(server, 'GET', `/v1/executions/?session_id=${hurried}`, { apiKey: key });
    assert.deepEqual(executions.body, [], 'and no execution was recorded');

    const patient = await call(server, 'POST', '/execute', { apiKey: key, json: { session_id: await newSession(), code: 'print("patient")', timeout: 120 } });
    assert.equal(patient.status, 200, patient.text);
    assert.equal(patient.body.stdout, 'patient\n');
    await waitUntil(
      'the queued run completes',
      async () => (await call(server, 'GET', `/v1/executions/${queued.body.task_id}`, { apiKey: key })).body.is_complete === true,
      120_000,
    );
  });
});
