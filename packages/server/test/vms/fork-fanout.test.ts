/**
 * Fork fan-out on real VMs (issue 38): one VM with state (a Python variable, a file, a background process) forked
 * into 20 in one call; every clone holds the parent's state, then each writes its own and they diverge while the
 * parent stays as it was. A count above the plan's fork cap, or one the plan's running-VM quota has no room for, is
 * refused (429) before anything starts. A fork that fails mid-way (a clone refused by the VM quota because a VM
 * of the same user started meanwhile: a real failure, no test hook) or whose client goes away leaves nothing: no
 * clone running, no session or VM record of a clone. Another user gets 404 on the parent, the snapshot route and
 * every clone.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { call, executeOk, startTestServer, type TestServer } from '../helpers/test-server.ts';

const FORK_COUNT = 20;
const FILE_CONTENT = `fork-${randomBytes(8).toString('hex')}`;
/** At most this many executes at once across the clones: 20 guests answering at once on 2 TCG cores is slow, not wrong. */
const PROBE_CONCURRENCY = 4;

/** Runs `work` over `items`, `limit` at a time, answers in order. */
async function eachLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i]!);
    }),
  );
  return results;
}

describe('fork fan-out on real VMs', { timeout: 30 * 60_000 }, () => {
  let server: TestServer;
  let alice: { apiKey: string; userId: number };
  let bob: { apiKey: string };
  let sessionId: string;
  let vmId: string;
  let snapshot: { snapshot_id: string; name: string };
  let clones: { vm_id: string; session_id: string }[] = [];

  before(async () => {
    // Room for the parent and exactly FORK_COUNT clones; a fork of more than FORK_COUNT is over the plan's cap.
    const forker = { ...DEFAULT_PLANS.enterprise!, maxConcurrentVms: FORK_COUNT + 1, maxTotalVcpus: 4 * (FORK_COUNT + 1), maxForkCount: FORK_COUNT };
    server = await startTestServer({ config: { plans: { ...DEFAULT_PLANS, forker } } });
    alice = await server.createUserWithKey('alice', 'forker');
    bob = await server.createUserWithKey('bob', 'forker');
  });
  after(() => server?.close());

  const as = (who: { apiKey: string }) => ({ apiKey: who.apiKey });
  const run = (session: string, body: Record<string, unknown>) => executeOk(server, alice.apiKey, session, body);
  const python = async (session: string, code: string) => (await run(session, { code })).stdout.trim();
  const bash = async (session: string, command: string) => (await run(session, { language: 'bash', command })).stdout.trim();
  /** The state a fork must carry, in one execute: the variable, the file, the process (counted), the guest's host name. */
  const stateOf = (session: string) =>
    python(
      session,
      [
        'import socket, subprocess',
        "ticker = subprocess.run(['pgrep', '-fc', 'sandboxd-fork-ticke[r]'], capture_output=True, text=True).stdout.strip()",
        'print(f"{x}|{open(\'/root/fork.txt\').read().strip()}|{ticker}|{socket.gethostname()}")',
      ].join('\n'),
    );
  /** Every VM record of alice's (all statuses) and every session of hers, from the store. */
  const aliceRows = async () => {
    const db = server.services.database.db;
    const vms = await db.selectFrom('vms').select(['id', 'status', 'session_id']).where('user_id', '=', alice.userId).execute();
    const sessions = await db.selectFrom('sessions').select('id').where('user_id', '=', alice.userId).execute();
    return { vms, sessions: sessions.map((s) => s.id) };
  };
  const liveVms = async () => (await aliceRows()).vms.filter((vm) => vm.status === 'active' || vm.status === 'starting');

  test('a VM with state: a Python variable, a file, a background process', async () => {
    const created = await call(server, 'POST', '/v1/sessions/session', { ...as(alice), json: { vcpu_count: 1, vm_lifetime_seconds: 1800 } });
    assert.equal(created.status, 200, created.text);
    sessionId = created.body.session_id;
    assert.equal(await python(sessionId, 'x = 41 + 1\nprint(x)'), '42');
    await bash(
      sessionId,
      `printf %s '${FILE_CONTENT}' > /root/fork.txt; setsid bash -c 'exec -a sandboxd-fork-ticker sleep 100000' >/dev/null 2>&1 < /dev/null &`,
    );
    vmId = (await call(server, 'GET', `/v1/sessions/status/${sessionId}`, as(alice))).body.vm_id;
    assert.equal(await stateOf(sessionId), `42|${FILE_CONTENT}|1|${vmId}`);
  });

  test("a count above the plan's fork cap is refused (429, naming the cap and the plan) and starts nothing", async () => {
    const before = await aliceRows();
    const refused = await call(server, 'POST', `/v1/vms/${vmId}/clone`, { ...as(alice), json: { count: FORK_COUNT + 1 } });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.code, 'QUOTA_EXCEEDED');
    assert.match(refused.body.detail, new RegExp(`plan \\(forker\\) makes at most ${FORK_COUNT} clones in one request; you asked for ${FORK_COUNT + 1}`));
    // Over the API's own range (100): refused by the request's schema.
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/clone`, { ...as(alice), json: { count: 101 } })).status, 422);
    const after = await aliceRows();
    assert.deepEqual([after.vms.length, after.sessions.length], [before.vms.length, before.sessions.length], 'no VM, no session');
    const snapshots = (await call(server, 'GET', '/v1/snapshots', as(alice))).body;
    assert.equal(snapshots.length, 0, 'no snapshot taken either');
  });

  test(`one call forks the VM into ${FORK_COUNT}: every clone holds the parent's state`, async () => {
    const started = performance.now();
    const forked = await call(server, 'POST', `/v1/vms/${vmId}/clone`, { ...as(alice), json: { count: FORK_COUNT } });
    const forkMs = performance.now() - started;
    assert.equal(forked.status, 200, forked.text);
    snapshot = forked.body.snapshot;
    clones = forked.body.clones;
    process.stderr.write(`[fork-fanout] ${FORK_COUNT} clones ready in ${Math.round(forkMs)} ms (snapshot ${snapshot.name})\n`);
    assert.equal(clones.length, FORK_COUNT);
    assert.equal(new Set(clones.map((c) => c.vm_id)).size, FORK_COUNT);
    assert.equal(new Set(clones.map((c) => c.session_id)).size, FORK_COUNT);
    for (const clone of forked.body.clones) {
      assert.equal(clone.status, 'active');
      assert.equal(clone.base_snapshot_id, snapshot.snapshot_id);
    }
    const states = await eachLimited(clones, PROBE_CONCURRENCY, (clone) => stateOf(clone.session_id));
    states.forEach((state, i) => assert.equal(state, `42|${FILE_CONTENT}|1|${clones[i]!.vm_id}`, `clone ${i}`));
    // One vm.cloned event per clone, naming the parent and the snapshot.
    const events = await listEventsAfter(server.services.database.db, 0, 10_000, alice.userId);
    const cloned = events.filter((e) => e.type === 'vm.cloned').map((e) => e.data as Record<string, unknown>);
    assert.deepEqual(
      new Set(cloned.filter((d) => d.source_vm_id === vmId && d.snapshot_id === snapshot.snapshot_id).map((d) => d.vm_id)),
      new Set(clones.map((c) => c.vm_id)),
    );
  });

  test('then each writes its own and they diverge; the parent is unchanged', async () => {
    await eachLimited(clones, PROBE_CONCURRENCY, (clone) =>
      python(
        clone.session_id,
        `import subprocess\nx = "${clone.vm_id}"\nopen('/root/fork.txt', 'w').write(x)\nsubprocess.run(['pkill', '-f', 'sandboxd-fork-ticke[r]'])`,
      ),
    );
    const states = await eachLimited(clones, PROBE_CONCURRENCY, (clone) => stateOf(clone.session_id));
    states.forEach((state, i) => assert.equal(state, `${clones[i]!.vm_id}|${clones[i]!.vm_id}|0|${clones[i]!.vm_id}`, `clone ${i}`));
    assert.equal(new Set(states).size, FORK_COUNT, 'every clone its own');
    assert.equal(await stateOf(sessionId), `42|${FILE_CONTENT}|1|${vmId}`, 'the parent as it was');
  });

  test('another user gets 404 on the parent, the snapshot route and every clone', async () => {
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/clone`, { ...as(bob), json: { count: 1 } })).status, 404);
    assert.equal((await call(server, 'POST', `/v1/snapshots/${snapshot.snapshot_id}/clone`, { ...as(bob), json: { count: 1 } })).status, 404);
    assert.equal((await call(server, 'POST', `/v1/snapshots/${snapshot.name}/clone`, { ...as(bob), json: { count: 1 } })).status, 404);
    for (const clone of clones) {
      assert.equal((await call(server, 'GET', `/v1/vms/${clone.vm_id}`, as(bob))).status, 404);
      assert.equal((await call(server, 'POST', `/v1/vms/${clone.vm_id}/clone`, { ...as(bob), json: {} })).status, 404);
    }
    assert.equal((await call(server, 'GET', '/v1/vms', as(bob))).body.length, 0);
  });

  test('a fork the plan has no room for is refused (429) before anything starts', async () => {
    // The parent and its 20 clones fill the plan's 21 running VMs.
    const before = await aliceRows();
    const refused = await call(server, 'POST', `/v1/snapshots/${snapshot.name}/clone`, { ...as(alice), json: { count: 1 } });
    assert.equal(refused.status, 429, refused.text);
    assert.match(refused.body.detail, /would make 22 VMs/);
    const after = await aliceRows();
    assert.deepEqual([after.vms.length, after.sessions.length], [before.vms.length, before.sessions.length]);
  });

  test('a fork that fails mid-way leaves nothing: its started clones killed, no session or VM record of them', async () => {
    // Room for 6 more: kill 6 clones. The fork of 6 passes the check up front; a VM alice starts while it runs
    // takes one place, so a later clone is refused by its own start's quota check.
    for (const clone of clones.splice(0, 6)) assert.equal((await call(server, 'DELETE', `/v1/vms/${clone.vm_id}`, as(alice))).status, 200);
    const before = await aliceRows();
    const fork = call(server, 'POST', `/v1/snapshots/${snapshot.snapshot_id}/clone`, { ...as(alice), json: { count: 6 } });
    const known = new Set(before.vms.map((vm) => vm.id));
    while (!(await aliceRows()).vms.some((vm) => !known.has(vm.id))) await sleep(20);
    const other = await call(server, 'POST', '/v1/vms', { ...as(alice), json: { vcpu_count: 1 } });
    assert.equal(other.status, 200, other.text);
    const failed = await fork;
    assert.equal(failed.status, 429, failed.text);
    assert.equal(failed.body.code, 'QUOTA_EXCEEDED');
    const after = await aliceRows();
    assert.deepEqual(
      after.vms.filter((vm) => !known.has(vm.id)).map((vm) => vm.id),
      [other.body.vm_id],
      'the only new VM record is the one alice started',
    );
    assert.deepEqual(
      after.sessions.filter((id) => !before.sessions.includes(id)),
      [other.body.session_id],
      'the only new session is that VM’s',
    );
    assert.equal((await liveVms()).length, 1 + clones.length + 1);
    // Clones did start before the refusal (their vm.started events stay in the feed), and were ended.
    const events = (await listEventsAfter(server.services.database.db, 0, 10_000, alice.userId)).filter((e) => !known.has(String(e.data.vm_id)));
    const startedClones = new Set(events.filter((e) => e.type === 'vm.started' && e.data.vm_id !== other.body.vm_id).map((e) => e.data.vm_id));
    assert.ok(startedClones.size >= 1, 'at least one clone had started');
    const ended = new Set(events.filter((e) => e.type === 'vm.killed').map((e) => e.data.vm_id));
    for (const id of startedClones) assert.ok(ended.has(id), `clone ${String(id)} was killed`);
    process.stderr.write(`[fork-fanout] the failed fork had started ${startedClones.size} clones, all killed\n`);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${other.body.vm_id}`, as(alice))).status, 200);
  });

  test('a fork whose client goes away leaves nothing either', async () => {
    const before = await aliceRows();
    const known = new Set(before.vms.map((vm) => vm.id));
    const gone = new AbortController();
    const fork = fetch(`${server.baseUrl}/v1/snapshots/${snapshot.snapshot_id}/clone`, {
      method: 'POST',
      headers: { 'x-api-key': alice.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ count: 5 }),
      signal: gone.signal,
    }).catch((error: Error) => error);
    while (!(await aliceRows()).vms.some((vm) => !known.has(vm.id))) await sleep(20);
    gone.abort();
    assert.ok((await fork) instanceof Error);
    // The fork winds down by itself: those under way finish, then every clone is killed and its records go.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const now = await aliceRows();
      const fresh = now.vms.filter((vm) => !known.has(vm.id));
      if (fresh.length === 0 && now.sessions.length === before.sessions.length) break;
      assert.ok(Date.now() < deadline, `left behind: ${JSON.stringify(fresh)}`);
      await sleep(250);
    }
    assert.equal((await liveVms()).length, 1 + clones.length);
  });

  test('the clones are killed at the end', async () => {
    await eachLimited(clones, 8, async (clone) => assert.equal((await call(server, 'DELETE', `/v1/vms/${clone.vm_id}`, as(alice))).status, 200));
    assert.equal((await liveVms()).length, 1);
  });
});
