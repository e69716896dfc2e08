/**
 * Pre-stop lifecycle hooks and the reasons of VM ends, on real VMs through HTTP: a session's hook is inherited
 * by its VM and runs before a kill (its output is an execution record with `trigger: pre_stop`, the end's
 * event says `user_kill`); a hook that outlives its timeout is cut and the kill completes, once for two
 * concurrent kills; a pause runs the hook; the end of a lifetime runs it and says `lifetime`; bad hooks are
 * 422. The lifetime VM starts first and expires while the other tests run, to keep the file short. A lifetime
 * changed after the start (POST /v1/vms/{id}/lifetime) moves the end both ways, also of a paused VM.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

describe('lifecycle hooks and end reasons', () => {
  let server: TestServer;
  let apiKey: string;
  /** A VM with a 20 s lifetime and a pre-stop hook, started before the other tests: it expires meanwhile. */
  let expiring: Promise<{ vmId: string; createdAt: number }>;

  before(async () => {
    server = await startTestServer();
    ({ apiKey } = await server.createUserWithKey('hooks', 'pro'));
    const createdAt = Date.now();
    expiring = call(server, 'POST', '/v1/vms', {
      apiKey,
      json: { vm_lifetime_seconds: 20, vcpu_count: 1, lifecycle_hooks: { pre_stop: { command: 'echo "lifetime over on $(hostname)"' } } },
    }).then((res) => {
      assert.equal(res.status, 200, res.text);
      return { vmId: res.body.vm_id as string, createdAt };
    });
    expiring.catch(() => {}); // observed by its test
  });
  after(() => server.close());

  /** The pre-stop hook records of a VM, from GET /v1/executions. */
  const hookRecordsOf = async (vmId: string) => {
    const res = await call(server, 'GET', '/v1/executions?limit=100', { apiKey });
    assert.equal(res.status, 200, res.text);
    return (res.body as Array<Record<string, any>>).filter((e) => e.vm_id === vmId && e.trigger === 'pre_stop');
  };
  const eventsOf = async (vmId: string) => (await listEventsAfter(server.services.database.db, 0, 10_000)).filter((e) => e.data.vm_id === vmId);

  test('invalid hooks are refused with 422, at VM and session create', async () => {
    const bad = [
      { pre_stop: { command: '' } },
      { pre_stop: { timeout_seconds: 5 } },
      { pre_stop: { command: 'true', timeout_seconds: 0 } },
      { pre_stop: { command: 'true', timeout_seconds: 121 } },
      { pre_stop: { command: 'true', timeout_seconds: 2.5 } },
      { pre_stop: 'true' },
    ];
    for (const hooks of bad) {
      const vm = await call(server, 'POST', '/v1/vms', { apiKey, json: { lifecycle_hooks: hooks } });
      assert.equal(vm.status, 422, `POST /v1/vms ${JSON.stringify(hooks)}: ${vm.text}`);
      const session = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { lifecycle_hooks: hooks } });
      assert.equal(session.status, 422, `POST /v1/sessions/session ${JSON.stringify(hooks)}: ${session.text}`);
    }
  });

  test("a session's hook runs in its VM before a kill: its output is in the records, the end says user_kill", async () => {
    const created = await call(server, 'POST', '/v1/sessions/session', {
      apiKey,
      json: {
        vcpu_count: 1,
        env: { SAYING: 'goodbye' },
        lifecycle_hooks: { pre_stop: { command: 'echo "$SAYING from $(hostname)"; echo to-stderr >&2; exit 3' } },
      },
    });
    assert.equal(created.status, 200, created.text);
    const sessionId = created.body.session_id;
    assert.deepEqual(
      created.body.lifecycle_hooks,
      { pre_stop: { command: 'echo "$SAYING from $(hostname)"; echo to-stderr >&2; exit 3', timeout_seconds: 30 } },
      'the default timeout is applied',
    );
    assert.deepEqual((await call(server, 'GET', `/v1/sessions/session/${sessionId}`, { apiKey })).body.lifecycle_hooks, created.body.lifecycle_hooks);

    const run = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command: 'hostname' } });
    assert.equal(run.status, 200, run.text);
    const vmId = run.body.vm_id;
    assert.deepEqual(
      (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body.lifecycle_hooks,
      created.body.lifecycle_hooks,
      'the VM inherited the hook',
    );

    const killed = await call(server, 'POST', '/kill', { apiKey, json: { session_id: sessionId } });
    assert.equal(killed.status, 200, killed.text);
    const [record, ...others] = await hookRecordsOf(vmId);
    assert.equal(others.length, 0);
    assert.equal(record!.session_id, sessionId);
    assert.equal(record!.language, 'bash');
    assert.equal(record!.serialized_stdout, `goodbye from ${vmId}\n`);
    assert.equal(record!.serialized_stderr, 'to-stderr\n');
    assert.deepEqual([record!.status, record!.exit_code, record!.is_complete], ['failed', 3, true]);

    const vm = (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body;
    assert.deepEqual([vm.status, vm.end_reason, vm.end_detail], ['killed', 'user_kill', 'killed']);
    const events = await eventsOf(vmId);
    const hook = events.find((e) => e.type === 'vm.pre_stop_hook');
    assert.deepEqual(hook?.data, {
      vm_id: vmId,
      session_id: sessionId,
      execution_id: record!.id,
      stop: 'user_kill',
      status: 'failed',
      exit_code: 3,
      timed_out: false,
    });
    const end = events.find((e) => e.type === 'vm.killed');
    assert.deepEqual([end?.data.reason, end?.data.detail], ['user_kill', 'killed']);
    assert.ok(hook!.seq < end!.seq, 'the hook ran before the end');
  });

  test('a hook that outlives its timeout is cut and the kill completes; two concurrent kills run it once', async () => {
    const created = await call(server, 'POST', '/v1/vms', {
      apiKey,
      json: { vcpu_count: 1, lifecycle_hooks: { pre_stop: { command: 'echo started; sleep 60; echo never', timeout_seconds: 2 } } },
    });
    assert.equal(created.status, 200, created.text);
    const vmId = created.body.vm_id;
    const started = Date.now();
    const [first, second] = await Promise.all([call(server, 'DELETE', `/v1/vms/${vmId}`, { apiKey }), call(server, 'DELETE', `/v1/vms/${vmId}`, { apiKey })]);
    const tookMs = Date.now() - started;
    assert.deepEqual([first.status, second.status], [200, 200], `${first.text} ${second.text}`);
    assert.ok(tookMs < 20_000, `the kill waited ${tookMs} ms for a hook with a 2 s timeout`);
    const records = await hookRecordsOf(vmId);
    assert.equal(records.length, 1, 'the hook ran once');
    assert.equal(records[0]!.status, 'timeout');
    assert.equal(records[0]!.serialized_stdout, 'started\n');
    assert.match(records[0]!.error, /timeout of 2 s/);
    const vm = (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body;
    assert.deepEqual([vm.status, vm.end_reason], ['killed', 'user_kill']);
    const events = await eventsOf(vmId);
    assert.deepEqual(
      events.filter((e) => e.type === 'vm.pre_stop_hook').map((e) => [e.data.stop, e.data.status, e.data.timed_out]),
      [['user_kill', 'timeout', true]],
    );
    assert.equal(events.filter((e) => e.type === 'vm.killed').length, 1);
  });

  test('a pause runs the hook first; killing the paused VM does not run it again', async () => {
    const created = await call(server, 'POST', '/v1/vms', {
      apiKey,
      json: { vcpu_count: 1, lifecycle_hooks: { pre_stop: { command: 'sync; echo flushed', timeout_seconds: 10 } } },
    });
    assert.equal(created.status, 200, created.text);
    const vmId = created.body.vm_id;
    const paused = await call(server, 'POST', `/v1/vms/${vmId}/pause`, { apiKey });
    assert.equal(paused.status, 200, paused.text);
    const records = await hookRecordsOf(vmId);
    assert.deepEqual(
      records.map((r) => [r.status, r.serialized_stdout]),
      [['completed', 'flushed\n']],
    );
    const events = await eventsOf(vmId);
    assert.deepEqual(
      events.filter((e) => e.type === 'vm.pre_stop_hook').map((e) => e.data.stop),
      ['pause'],
    );
    // A paused VM's lifetime does not count down: a new one is what it will have left when it resumes.
    const relifed = await call(server, 'POST', `/v1/vms/${vmId}/lifetime`, { apiKey, json: { lifetime_seconds: 1234 } });
    assert.equal(relifed.status, 200, relifed.text);
    assert.deepEqual([relifed.body.status, relifed.body.expires_in_seconds], ['paused', 1234]);
    const killed = await call(server, 'DELETE', `/v1/vms/${vmId}`, { apiKey });
    assert.equal(killed.status, 200, killed.text);
    assert.equal((await hookRecordsOf(vmId)).length, 1, 'nothing runs in a paused VM');
  });

  test("a lifetime changed after the start moves the VM's end: later, then sooner (it ends then, saying lifetime)", async () => {
    const created = await call(server, 'POST', '/v1/vms', { apiKey, json: { vcpu_count: 1, vm_lifetime_seconds: 300 } });
    assert.equal(created.status, 200, created.text);
    const vmId = created.body.vm_id;
    const lifetime = (seconds: unknown, key = apiKey) => call(server, 'POST', `/v1/vms/${vmId}/lifetime`, { apiKey: key, json: { lifetime_seconds: seconds } });

    const before = Date.now();
    const later = await lifetime(3600);
    assert.equal(later.status, 200, later.text);
    const expiresAt = Date.parse(later.body.expires_at);
    assert.ok(expiresAt >= before + 3600_000 && expiresAt <= Date.now() + 3600_000, later.body.expires_at);
    assert.equal((await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body.expires_at, later.body.expires_at);

    for (const bad of [0, -5, 2.5, 30 * 24 * 3600 + 1, '60']) assert.equal((await lifetime(bad)).status, 422, `lifetime_seconds ${bad}`);
    const { apiKey: stranger } = await server.createUserWithKey('not-the-owner', 'pro');
    assert.equal((await lifetime(5, stranger)).status, 404);

    const setAt = Date.now();
    const sooner = await lifetime(4);
    assert.equal(sooner.status, 200, sooner.text);
    const ended = await waitUntil(
      'the VM to end at its new deadline',
      async () => {
        const row = (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body;
        return row.status === 'killed' ? row : undefined;
      },
      60_000,
      250,
    );
    assert.deepEqual([ended.end_reason, ended.end_detail], ['lifetime', 'expired']);
    assert.ok(Date.now() - setAt >= 4000, 'not before its new deadline');
    const afterEnd = await lifetime(60);
    assert.deepEqual([afterEnd.status, afterEnd.body.code], [409, 'CONFLICT']);
  });

  test('the end of a lifetime runs the hook and says lifetime', async () => {
    const { vmId, createdAt } = await expiring;
    const vm = await waitUntil(
      'the VM to expire',
      async () => {
        const row = (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body;
        return row.status === 'killed' ? row : undefined;
      },
      90_000,
      250,
    );
    assert.deepEqual([vm.end_reason, vm.end_detail], ['lifetime', 'expired']);
    assert.ok(Date.now() - createdAt >= 20_000);
    const records = await hookRecordsOf(vmId);
    assert.deepEqual(
      records.map((r) => [r.status, r.exit_code, r.serialized_stdout]),
      [['completed', 0, `lifetime over on ${vmId}\n`]],
    );
    const events = await eventsOf(vmId);
    assert.deepEqual(events.find((e) => e.type === 'vm.pre_stop_hook')?.data.stop, 'lifetime');
    const end = events.find((e) => e.type === 'vm.expired');
    assert.deepEqual([end?.data.reason, end?.data.detail], ['lifetime', 'expired']);
  });
});
