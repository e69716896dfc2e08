/**
 * The session/VM state machine of the spec, through HTTP against a real server with real VMs: first
 * execute spawns, later ones reuse, kill, expiry, respawn, and the status views at each step; Python state
 * across calls, bash exit codes, async execute polled to completion, and the 408 path.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

async function poll<T>(fn: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`still not done after ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('sessions and execution on real VMs', () => {
  let server: TestServer;
  let apiKey: string;
  let sessionId: string;
  let firstVmId: string;
  /** A session whose VM has the shortest lifetime (20 s), started first: it expires while the other tests run. */
  let shortLived: Promise<{ shortId: string; first: Awaited<ReturnType<typeof call>> }>;

  before(async () => {
    server = await startTestServer();
    ({ apiKey } = await server.createUserWithKey('runner', 'pro'));
    shortLived = (async () => {
      const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vm_lifetime_seconds: 20, vcpu_count: 1 } });
      const shortId = created.body.session_id as string;
      return { shortId, first: await call(server, 'POST', '/execute', { apiKey, json: { session_id: shortId, language: 'bash', command: 'hostname' } }) };
    })();
    shortLived.catch(() => {}); // its test awaits it
  });
  after(() => server.close());

  const execute = (body: Record<string, unknown>) => call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, ...body } });
  const status = async () => (await call(server, 'GET', `/v1/sessions/status/${sessionId}`, { apiKey })).body;

  test('a new session has no VM: the spec\'s "no VM" status view', async () => {
    const created = await call(server, 'POST', '/v1/sessions/session', {
      apiKey,
      json: { vm_lifetime_seconds: 600, vcpu_count: 1, memory_mb: 512, metadata: { suite: 'state-machine' }, env: { GREETING: 'hello from env' } },
    });
    assert.equal(created.status, 200, created.text);
    sessionId = created.body.session_id;
    assert.match(sessionId, /^[0-9a-f-]{36}$/);
    assert.equal(created.body.status, 'created');
    assert.equal(created.body.vm_id, null);
    assert.deepEqual(await status(), {
      session_id: sessionId,
      exists: true,
      vm_assigned: false,
      vm_alive: false,
      vm_status: null,
      vm_id: null,
      uptime_seconds: null,
      expires_in_seconds: null,
      created_at: created.body.created_at,
    });
  });

  test('the first execute spawns a VM; Python state survives between calls; env is applied', async () => {
    const first = await execute({ code: 'x = 41\nprint("set")' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.stdout, 'set\n');
    assert.equal(first.body.exit_code, 0);
    assert.ok(first.body.vm_id);
    firstVmId = first.body.vm_id;
    const second = await execute({ code: 'print(x + 1)\nimport os\nprint(os.environ["GREETING"])' });
    assert.equal(second.body.stdout, '42\nhello from env\n');
    assert.equal(second.body.vm_id, firstVmId, 'the same VM is reused');
    assert.equal(typeof second.body.execution_time, 'number');
    assert.equal(second.body.session_id, sessionId);

    const view = await status();
    assert.equal(view.vm_assigned, true);
    assert.equal(view.vm_alive, true);
    assert.equal(view.vm_status, 'active');
    assert.equal(view.vm_id, firstVmId);
    assert.ok(view.uptime_seconds >= 0);
    assert.ok(view.expires_in_seconds > 500 && view.expires_in_seconds <= 600);
  });

  test('Python exceptions come back in stderr with the traceback and a non-zero exit code', async () => {
    const res = await execute({ code: 'print("before")\n1/0' });
    assert.equal(res.status, 200);
    assert.equal(res.body.stdout, 'before\n');
    assert.match(res.body.stderr, /ZeroDivisionError: division by zero/);
    assert.match(res.body.stderr, /Traceback/);
    assert.equal(res.body.exit_code, 1);
    assert.equal(res.body.status, 'failed');
  });

  test('bash: stdout, stderr and exit codes; the session env is set', async () => {
    const res = await execute({ language: 'bash', command: 'echo out; echo err >&2; echo "$GREETING"; exit 3' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.stdout, 'out\nhello from env\n');
    assert.equal(res.body.stderr, 'err\n');
    assert.equal(res.body.exit_code, 3);
    assert.equal(res.body.vm_id, firstVmId);
  });

  test('neither command nor code is a 422', async () => {
    const res = await execute({ language: 'bash' });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'command']);
  });

  test('async execute answers a task id at once; polling shows it complete', async () => {
    const started = await call(server, 'POST', '/v1/execute_async', {
      apiKey,
      json: { session_id: sessionId, language: 'bash', command: 'sleep 1; echo done' },
    });
    assert.equal(started.status, 200, started.text);
    const taskId = started.body.task_id;
    assert.equal(typeof taskId, 'number');
    const record = await poll(
      async () => (await call(server, 'GET', `/v1/executions/${taskId}`, { apiKey })).body,
      (r) => r.is_complete === true,
      60_000,
    );
    assert.equal(record.serialized_stdout, 'done\n');
    assert.equal(record.exit_code, 0);
    assert.equal(record.status, 'completed');
    assert.equal(record.session_id, sessionId);
    assert.equal(record.mode, 'async');
    assert.ok(record.completed_at);
  });

  test('a sync execute that outlives its timeout answers 408 with the execution id, and completes later', async () => {
    const res = await execute({ language: 'bash', command: 'sleep 3; echo finished', timeout: 1 });
    assert.equal(res.status, 408, res.text);
    assert.equal(res.body.code, 'EXECUTION_TIMEOUT');
    const id = res.body.execution_id;
    assert.equal(typeof id, 'number');
    const record = await poll(
      async () => (await call(server, 'GET', `/v1/executions/${id}`, { apiKey })).body,
      (r) => r.is_complete === true,
      60_000,
    );
    assert.equal(record.serialized_stdout, 'finished\n');
    assert.equal(record.status, 'completed');
  });

  test('executions list: the records of the caller, newest first; HEAD answers 200', async () => {
    const list = await call(server, 'GET', `/v1/executions/?session_id=${sessionId}`, { apiKey });
    assert.equal(list.status, 200);
    assert.ok(list.body.length >= 6);
    assert.ok(list.body[0].id > list.body[1].id);
    assert.equal((await call(server, 'HEAD', '/v1/executions/', { apiKey })).status, 200);
  });

  test("kill: the message names the VM; the status view becomes the spec's killed view", async () => {
    const killed = await call(server, 'POST', '/kill', { apiKey, json: { session_id: sessionId } });
    assert.equal(killed.status, 200, killed.text);
    assert.match(killed.body.message, new RegExp(firstVmId));
    const view = await status();
    assert.equal(view.vm_assigned, true);
    assert.equal(view.vm_alive, false);
    assert.equal(view.vm_status, 'killed');
    assert.equal(view.vm_id, firstVmId);
    assert.equal(view.uptime_seconds, null);
    assert.equal(view.expires_in_seconds, 0);
    const vm = await call(server, 'GET', `/v1/vms/${firstVmId}`, { apiKey });
    assert.deepEqual([vm.body.end_reason, vm.body.end_detail], ['user_kill', 'killed']);
    const again = await call(server, 'POST', '/kill', { apiKey, json: { session_id: sessionId } });
    assert.equal(again.status, 404, 'a killed VM cannot be killed again');
  });

  test('the next execute after a kill spawns a new VM with fresh state', async () => {
    const res = await execute({ code: 'print(x)' });
    assert.equal(res.status, 200, res.text);
    assert.notEqual(res.body.vm_id, firstVmId);
    assert.match(res.body.stderr, /NameError/);
    assert.equal((await status()).vm_status, 'active');
  });

  test('a VM expires at its lifetime; the next execute spawns a new one', async () => {
    const { shortId, first } = await shortLived;
    assert.equal(first.status, 200, first.text);
    const vmId = first.body.vm_id;
    assert.equal(first.body.stdout.trim(), vmId, 'the guest hostname is its VM id');
    const expired = await poll(
      async () => (await call(server, 'GET', `/v1/sessions/status/${shortId}`, { apiKey })).body,
      (s) => s.vm_status === 'killed',
      40_000,
    );
    assert.equal(expired.expires_in_seconds, 0);
    const ended = (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body;
    assert.deepEqual([ended.end_reason, ended.end_detail], ['lifetime', 'expired']);
    const next = await call(server, 'POST', '/execute', { apiKey, json: { session_id: shortId, language: 'bash', command: 'echo again' } });
    assert.equal(next.status, 200);
    assert.notEqual(next.body.vm_id, vmId);
    assert.equal(next.body.stdout, 'again\n');
  });

  test('execute without session_id creates a session; usage aggregates its executions', async () => {
    const res = await call(server, 'POST', '/execute', { apiKey, json: { code: 'sum(range(10))' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.stdout, '45\n');
    const usage = await call(server, 'GET', `/v1/sessions/usage/${res.body.session_id}`, { apiKey });
    assert.equal(usage.status, 200);
    assert.equal(usage.body.executions, 1);
    assert.ok(usage.body.vm, 'live VM figures while it runs');
    assert.ok(usage.body.vm.memory_total_mb > 0);
  });

  test('sandboxes list filters by metadata containment', async () => {
    const all = await call(server, 'GET', '/v1/sessions/sandboxes', { apiKey });
    assert.equal(all.status, 200);
    assert.ok(all.body.length >= 4);
    const filtered = await call(server, 'GET', `/v1/sessions/sandboxes?metadata=${encodeURIComponent('{"suite":"state-machine"}')}`, { apiKey });
    assert.equal(filtered.body.length, 2, 'the two VMs of the first session');
    assert.ok(filtered.body.every((s: any) => s.metadata.suite === 'state-machine' && s.session_id === sessionId));
    for (const field of ['sandbox_id', 'template_id', 'name', 'metadata', 'started_at', 'end_at', 'status']) assert.ok(field in filtered.body[0], field);
    const none = await call(server, 'GET', `/v1/sessions/sandboxes?metadata=${encodeURIComponent('{"suite":"other"}')}`, { apiKey });
    assert.deepEqual(none.body, []);
    const bad = await call(server, 'GET', '/v1/sessions/sandboxes?metadata=%7Bnope', { apiKey });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0].loc, ['query', 'metadata']);
  });
});
