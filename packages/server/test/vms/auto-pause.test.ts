/**
 * Auto-pause, auto-resume and paused-VM retention on real VMs, through HTTP (issue 37): a session with
 * `auto_pause: 10` that sets a Python variable and starts a background process goes idle, is paused by the loop
 * (`vm.auto_paused`), and the next execute resumes it (`resumed` in the body, `Sandboxd-Resumed` header) with the
 * variable and the process still there; a file call resumes it too, and so does the first request through its preview; a VM that keeps executing is not paused; a paused
 * VM past its plan's retention is deleted (`vm.pause_expired`, then `vm.expired`); E2B's `autoPause: true` pauses
 * the sandbox at its timeout instead of killing it. Another user gets 404 on all of it. The E2B sandbox and the busy
 * VM start first and run beside the idle one, to keep the file short.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

/** A plan that keeps paused VMs one hour (the retention test backdates a pause past it). */
const HOUR_KEEP = { ...DEFAULT_PLANS.pro!, pausedRetentionSeconds: 3600 };

describe('auto-pause, auto-resume and retention', () => {
  let server: TestServer;
  let apiKey: string;
  let otherKey: string;
  /** An E2B sandbox with autoPause and a 20 s timeout, created before the other tests: it reaches its timeout meanwhile. */
  let e2bSandbox: Promise<string>;

  before(async () => {
    server = await startTestServer({ config: { autoPauseCheckSeconds: 1, pausedRetentionCheckSeconds: 1, plans: { ...DEFAULT_PLANS, hourkeep: HOUR_KEEP } } });
    ({ apiKey } = await server.createUserWithKey('napper', 'hourkeep'));
    ({ apiKey: otherKey } = await server.createUserWithKey('napper-other', 'pro'));
    e2bSandbox = call(server, 'POST', '/e2b/v2/sandboxes', {
      headers: { 'x-api-key': apiKey },
      json: { templateID: 'base', timeout: 20, autoPause: true },
    }).then((res) => {
      assert.equal(res.status, 201, res.text);
      return res.body.sandboxID as string;
    });
    e2bSandbox.catch(() => {}); // observed by its test
  });
  after(() => server.close());

  const eventsOf = async (vmId: string) => (await listEventsAfter(server.services.database.db, 0, 10_000)).filter((e) => e.data.vm_id === vmId);
  const vmOf = async (vmId: string, key = apiKey) => call(server, 'GET', `/v1/vms/${vmId}`, { apiKey: key });
  const waitForStatus = (vmId: string, status: string, timeoutMs: number) =>
    waitUntil(`VM ${vmId} ${status}`, async () => (await vmOf(vmId)).body.status === status, timeoutMs, 250);
  const execute = (sessionId: string, code: string, key = apiKey) =>
    call(server, 'POST', '/execute', { apiKey: key, json: { session_id: sessionId, language: 'python', code, timeout: 60 } });

  test('auto_pause and on_expiry are bounded, stored and read back; a VM inherits them', async () => {
    for (const bad of [{ auto_pause: 9 }, { auto_pause: 2_592_001 }, { auto_pause: 12.5 }, { on_expiry: 'sleep' }]) {
      const res = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: bad });
      assert.equal(res.status, 422, `${JSON.stringify(bad)}: ${res.text}`);
    }
    const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { auto_pause: 600, on_expiry: 'pause', vm_lifetime_seconds: 172_800 } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(
      [created.body.auto_pause, created.body.on_expiry, created.body.vm_lifetime_seconds],
      [600, 'pause', 172_800],
      'a lifetime past 24 h is taken',
    );
    const read = await call(server, 'GET', `/v1/sessions/session/${created.body.session_id}`, { apiKey });
    assert.deepEqual([read.body.auto_pause, read.body.on_expiry], [600, 'pause']);
    const plain = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: {} });
    assert.deepEqual([plain.body.auto_pause, plain.body.on_expiry], [null, 'kill'], 'off by default');
    assert.equal((await call(server, 'GET', `/v1/sessions/session/${created.body.session_id}`, { apiKey: otherKey })).status, 404);
  });

  test('an idle session is paused by the loop; the next execute resumes it with its variable and process; a file call and preview traffic resume it too; a busy VM is not paused', async (t) => {
    const idle = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { auto_pause: 10, vcpu_count: 1 } });
    const busy = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { auto_pause: 10, vcpu_count: 1 } });
    const [idleId, busyId] = [idle.body.session_id as string, busy.body.session_id as string];

    const first = await execute(
      idleId,
      'import subprocess\nanswer = 41\nsleeper = subprocess.Popen(["python3", "-m", "http.server", "8000", "--directory", "/tmp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nprint(sleeper.pid)',
    );
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.resumed, undefined, 'nothing was resumed');
    assert.equal(first.headers.get('sandboxd-resumed'), null);
    const sleeperPid = first.body.stdout.trim();
    const vmId = first.body.vm_id as string;
    assert.equal((await vmOf(vmId)).body.auto_pause, 10, 'the VM inherited the session’s auto_pause');

    // The busy VM runs something every two seconds (a call in flight or started within 10 s all along).
    const busyRun = await execute(busyId, 'print("up")');
    assert.equal(busyRun.status, 200, busyRun.text);
    const busyVmId = busyRun.body.vm_id as string;
    let keepBusy = true;
    const busyLoop = (async () => {
      while (keepBusy) {
        const res = await execute(busyId, 'import time; time.sleep(1); print("still here")');
        assert.equal(res.status, 200, res.text);
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    })();

    const pausedAt = Date.now();
    await waitForStatus(vmId, 'paused', 45_000);
    const idleFor = (Date.now() - pausedAt) / 1000;
    const autoPaused = (await eventsOf(vmId)).find((e) => e.type === 'vm.auto_paused');
    assert.ok(autoPaused, 'vm.auto_paused recorded');
    assert.equal(autoPaused.data.session_id, idleId);
    assert.ok((autoPaused.data.idle_seconds as number) >= 10, `idle ${String(autoPaused.data.idle_seconds)} s`);
    assert.ok((autoPaused.data.duration_ms as number) > 0);
    assert.ok(idleFor < 40, `paused ${idleFor} s after its last use`);

    const resumed = await execute(idleId, 'print(answer + 1, sleeper.poll())');
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(resumed.body.stdout.trim(), '42 None', 'the variable and the process survived the pause');
    assert.equal(resumed.body.vm_id, vmId, 'the same VM');
    assert.ok(Number.isInteger(resumed.body.resumed?.ms) && resumed.body.resumed.ms > 0, `resumed: ${JSON.stringify(resumed.body.resumed)}`);
    assert.equal(resumed.headers.get('sandboxd-resumed'), String(resumed.body.resumed.ms));
    t.diagnostic(
      `auto-pause: paused ${String(autoPaused.data.idle_seconds)} s after its last use, the pause took ${String(autoPaused.data.duration_ms)} ms; the execute that resumed it waited ${resumed.body.resumed.ms} ms for the resume`,
    );
    const ps = await call(server, 'POST', '/execute', {
      apiKey,
      json: { session_id: idleId, language: 'bash', command: `kill -0 ${sleeperPid} && echo alive` },
    });
    assert.equal(ps.body.stdout.trim(), 'alive');
    assert.equal(ps.headers.get('sandboxd-resumed'), null, 'only the request that resumed says so');

    // Idle again: paused again, and a file call is what resumes it this time.
    await waitForStatus(vmId, 'paused', 45_000);
    const stat = await call(server, 'GET', `/v1/sessions/${idleId}/files/stat?path=/root`, { apiKey });
    assert.equal(stat.status, 200, stat.text);
    assert.ok(Number(stat.headers.get('sandboxd-resumed')) > 0, 'the file call resumed the VM');
    t.diagnostic(`the file call that resumed it waited ${stat.headers.get('sandboxd-resumed')} ms for the resume`);
    assert.equal((await vmOf(vmId)).body.status, 'active');

    // Idle once more: the first HTTP request through its preview waits for the resume, and is answered by the app.
    await waitForStatus(vmId, 'paused', 45_000);
    const preview = await call(server, 'GET', `/v1/app/${idleId}/8000/`, { apiKey });
    assert.equal(preview.status, 200, preview.text);
    assert.match(preview.text, /Directory listing/);
    assert.ok(Number(preview.headers.get('sandboxd-resumed')) > 0, 'the preview request resumed the VM');
    t.diagnostic(`the preview request that resumed it waited ${preview.headers.get('sandboxd-resumed')} ms for the resume`);

    keepBusy = false;
    await busyLoop;
    assert.equal((await vmOf(busyVmId)).body.status, 'active', 'the busy VM was never paused');
    assert.equal((await eventsOf(busyVmId)).filter((e) => e.type === 'vm.auto_paused' || e.type === 'vm.paused').length, 0);

    // Another user sees none of it, and cannot wake it.
    assert.equal((await vmOf(vmId, otherKey)).status, 404);
    assert.equal((await execute(idleId, 'print(answer)', otherKey)).status, 404);
    assert.equal((await call(server, 'GET', `/v1/sessions/${idleId}/files/stat?path=/root`, { apiKey: otherKey })).status, 404);
    for (const id of [vmId, busyVmId]) await call(server, 'DELETE', `/v1/vms/${id}`, { apiKey });
  });

  test("a paused VM kept past its plan's retention is deleted (vm.pause_expired, then vm.expired); a recent one is kept", async () => {
    const make = async () => {
      const res = await call(server, 'POST', '/v1/vms', { apiKey, json: { vcpu_count: 1 } });
      assert.equal(res.status, 200, res.text);
      const vmId = res.body.vm_id as string;
      const paused = await call(server, 'POST', `/v1/vms/${vmId}/pause`, { apiKey });
      assert.equal(paused.status, 200, paused.text);
      return vmId;
    };
    const old = await make();
    const recent = await make();
    // Paused two hours ago, as far as the store knows: past the plan's hour.
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000).toISOString();
    await server.services.database.db.updateTable('vms').set({ paused_at: twoHoursAgo }).where('id', '=', old).execute();
    await waitForStatus(old, 'killed', 15_000);
    const ended = await vmOf(old);
    assert.deepEqual([ended.body.end_reason, ended.body.end_detail], ['lifetime', 'expired']);
    const types = (await eventsOf(old)).map((e) => e.type);
    assert.deepEqual(types.slice(-2), ['vm.pause_expired', 'vm.expired']);
    const expired = (await eventsOf(old)).find((e) => e.type === 'vm.pause_expired')!;
    assert.equal(expired.data.retention_seconds, 3600);
    assert.ok((expired.data.paused_seconds as number) >= 7200);
    // Its saved memory is gone: it cannot be resumed.
    assert.equal((await call(server, 'POST', `/v1/vms/${old}/resume`, { apiKey })).status, 409);

    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal((await vmOf(recent)).body.status, 'paused', 'a pause within the retention is kept');
    await call(server, 'DELETE', `/v1/vms/${recent}`, { apiKey });
  });

  test('E2B autoPause: the sandbox is paused at its timeout instead of killed, and connect resumes it', async () => {
    const sandboxId = await e2bSandbox;
    const session = () => call(server, 'GET', `/v1/sessions/session/${sandboxId}`, { apiKey });
    assert.equal((await session()).body.on_expiry, 'pause');
    await waitUntil('the E2B sandbox paused at its timeout', async () => (await session()).body.vm_status === 'paused', 60_000, 250);
    const vmId = (await session()).body.vm_id as string;
    const events = (await eventsOf(vmId)).map((e) => e.type);
    assert.ok(events.includes('vm.paused') && !events.includes('vm.expired'), events.join(', '));
    assert.equal((await vmOf(vmId, otherKey)).status, 404);
    const info = await call(server, 'GET', `/e2b/sandboxes/${sandboxId}`, { headers: { 'x-api-key': apiKey } });
    assert.equal(info.body.state, 'paused');
    const connected = await call(server, 'POST', `/e2b/v2/sandboxes/${sandboxId}/connect`, { headers: { 'x-api-key': apiKey }, json: { timeout: 60 } });
    assert.equal(connected.status, 201, connected.text);
    assert.ok(Number(connected.headers.get('sandboxd-resumed')) > 0, 'connect says it resumed the sandbox');
    assert.equal((await session()).body.vm_status, 'active');
    await call(server, 'DELETE', `/v1/vms/${vmId}`, { apiKey });
  });
});
