/**
 * The E2B control plane through the unmodified `e2b` SDK: list (state and metadata filters, pages), getInfo,
 * setTimeout, getMetrics, pause and connect (a file written before the pause is there after it), kill, snapshots
 * (create, list, start a sandbox from one, delete), and what another user and a bad key get.
 * Two sandboxes (one is paused and resumed) and one started from the snapshot.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { AuthenticationError, RateLimitError, Sandbox, SandboxError, SandboxNotFoundError } from 'e2b';
import { egressPolicyOf } from '../../src/api/e2b/control-plane/network.ts';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

type Opts = { apiKey: string; apiUrl: string; sandboxUrl: string };

describe('e2b control plane', () => {
  let server: TestServer;
  let opts: Opts;
  let otherOpts: Opts;
  let tinyOpts: Opts;
  let running: Sandbox;
  let paused: Sandbox;
  const run = randomBytes(4).toString('hex');
  const snapshotName = `h1-snap-${run}`;

  before(async () => {
    // `tiny` allows 1 vCPU in all: any sandbox (2 vCPUs) is over its quota, so none of its creates boots a VM.
    const tiny = { executionsPerMinute: 60, maxConcurrentVms: 1, maxTotalVcpus: 1, diskMb: 1024, maxBrowserSessions: 0, pausedRetentionSeconds: 604_800 };
    server = await startTestServer({ config: { plans: { ...DEFAULT_PLANS, tiny } } });
    const optsOf = (apiKey: string) => ({ apiKey, apiUrl: `${server.baseUrl}/e2b`, sandboxUrl: `${server.baseUrl}/e2b/sandbox` });
    opts = optsOf((await server.createUserWithKey('e2b-cp', 'pro')).apiKey);
    otherOpts = optsOf((await server.createUserWithKey('e2b-cp-other', 'pro')).apiKey);
    tinyOpts = optsOf((await server.createUserWithKey('e2b-cp-tiny', 'tiny')).apiKey);
    // Created one after the other: the list is newest first, so `paused` comes first.
    running = await Sandbox.create({ ...opts, metadata: { run, role: 'running' }, timeoutMs: 300_000 });
    paused = await Sandbox.create({ ...opts, metadata: { run, role: 'paused' }, timeoutMs: 300_000 });
  });
  after(async () => {
    for (const sandbox of [running, paused]) if (sandbox) await Sandbox.kill(sandbox.sandboxId, opts).catch(() => false);
    await server.close();
  });

  const idsOf = (items: { sandboxId: string }[]) => items.map((item) => item.sandboxId);

  test('list filters by metadata, newest first, and pages with nextToken', async () => {
    const all = await Sandbox.list({ ...opts, query: { metadata: { run } } }).nextItems();
    assert.deepEqual(idsOf(all), [paused.sandboxId, running.sandboxId]);
    assert.deepEqual(all[1]!.metadata, { run, role: 'running' });
    assert.equal(all[1]!.state, 'running');
    assert.equal(all[1]!.templateId, 'base');

    const one = await Sandbox.list({ ...opts, query: { metadata: { run, role: 'running' } } }).nextItems();
    assert.deepEqual(idsOf(one), [running.sandboxId]);
    assert.deepEqual(await Sandbox.list({ ...opts, query: { metadata: { run: 'no-such-run' } } }).nextItems(), []);

    const pages = Sandbox.list({ ...opts, query: { metadata: { run } }, limit: 1 });
    const first = await pages.nextItems();
    assert.deepEqual(idsOf(first), [paused.sandboxId]);
    assert.equal(pages.hasNext, true);
    assert.ok(pages.nextToken);
    const second = await pages.nextItems();
    assert.deepEqual(idsOf(second), [running.sandboxId]);
    assert.equal(pages.hasNext, false, 'the last page has no next token');
  });

  test('getInfo, and setTimeout moves endAt either way', async () => {
    const info = await Sandbox.getInfo(running.sandboxId, opts);
    assert.equal(info.sandboxId, running.sandboxId);
    assert.equal(info.state, 'running');
    assert.deepEqual(info.metadata, { run, role: 'running' });
    assert.ok(info.cpuCount >= 1 && info.memoryMB > 0);

    await running.setTimeout(900_000);
    const later = (await running.getInfo()).endAt.getTime() - Date.now();
    assert.ok(later > 880_000 && later <= 901_000, `endAt ${later} ms from now after setTimeout(900 s)`);
    await Sandbox.setTimeout(running.sandboxId, 240_000, opts);
    const sooner = (await running.getInfo()).endAt.getTime() - Date.now();
    assert.ok(sooner > 220_000 && sooner <= 241_000, `endAt ${sooner} ms from now after setTimeout(240 s)`);
  });

  test('getMetrics answers live figures of the guest', async () => {
    const metrics = await running.getMetrics();
    assert.equal(metrics.length, 1);
    const [sample] = metrics;
    assert.ok(sample!.cpuCount >= 1, `cpuCount ${sample!.cpuCount}`);
    assert.ok(sample!.cpuUsedPct >= 0 && sample!.cpuUsedPct <= 100, `cpuUsedPct ${sample!.cpuUsedPct}`);
    assert.ok(sample!.memTotal > 100 * 2 ** 20 && sample!.memUsed > 0 && sample!.memUsed < sample!.memTotal, `memory ${sample!.memUsed}/${sample!.memTotal}`);
    assert.ok(sample!.diskTotal > 0 && sample!.diskUsed > 0 && sample!.diskUsed < sample!.diskTotal, `disk ${sample!.diskUsed}/${sample!.diskTotal}`);
    assert.ok(Math.abs(sample!.timestamp.getTime() - Date.now()) < 60_000);
    assert.deepEqual(await running.getMetrics({ start: new Date(Date.now() - 3_600_000), end: new Date(Date.now() - 1_800_000) }), [], 'a window in the past');
  });

  test('pause, list by state, connect resumes keeping a file and a process', async () => {
    await paused.commands.run('echo kept-across-pause > /home/user/f');
    // A process that counts, one line a second, started before the pause.
    const counter = await paused.commands.run('for i in $(seq 1 600); do echo $i; sleep 1; done', { background: true });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await counter.disconnect();
    assert.equal(await paused.pause(), true);
    assert.equal(await Sandbox.pause(paused.sandboxId, opts), false, 'pausing a paused sandbox answers false');
    assert.equal((await Sandbox.getInfo(paused.sandboxId, opts)).state, 'paused');
    const pausedOnes = await Sandbox.list({ ...opts, query: { metadata: { run }, state: ['paused'] } }).nextItems();
    assert.deepEqual(idsOf(pausedOnes), [paused.sandboxId]);
    assert.equal(pausedOnes[0]!.state, 'paused');
    const runningOnes = await Sandbox.list({ ...opts, query: { metadata: { run }, state: ['running'] } }).nextItems();
    assert.deepEqual(idsOf(runningOnes), [running.sandboxId]);

    // The deprecated v1 list answers running sandboxes only; v1 resume of a running one is a conflict.
    const v1 = await call(server, 'GET', `/e2b/sandboxes?metadata=${encodeURIComponent(`run=${run}`)}`, { headers: { 'x-api-key': opts.apiKey } });
    assert.deepEqual(
      (v1.body as { sandboxID: string }[]).map((item) => item.sandboxID),
      [running.sandboxId],
    );
    const resumeRunning = await call(server, 'POST', `/e2b/sandboxes/${running.sandboxId}/resume`, { headers: { 'x-api-key': opts.apiKey }, json: {} });
    assert.equal(resumeRunning.status, 409);

    const resumed = await Sandbox.connect(paused.sandboxId, { ...opts, timeoutMs: 600_000 });
    assert.equal(resumed.sandboxId, paused.sandboxId);
    const info = await resumed.getInfo();
    assert.equal(info.state, 'running');
    assert.ok(info.endAt.getTime() - Date.now() > 580_000, 'connect gave it the timeout asked for');
    const read = await resumed.commands.run('cat /home/user/f');
    assert.equal(read.stdout, 'kept-across-pause\n');
    // The process runs on, with its pid, and its output goes on from where it was, nothing lost or repeated.
    assert.ok(
      (await resumed.commands.list()).some((listed) => listed.pid === counter.pid),
      'the process is still listed after the resume',
    );
    const lines: string[] = [];
    const again = await resumed.commands.connect(counter.pid, { onStdout: (data) => void lines.push(data) });
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && lines.join('').trim().split('\n').length < 4) await new Promise((resolve) => setTimeout(resolve, 250));
    const numbers = lines.join('').trim().split('\n').map(Number);
    assert.ok(numbers.length >= 4, `output continues after the resume (got ${JSON.stringify(numbers)})`);
    assert.deepEqual(
      numbers,
      numbers.map((_, index) => index + 1),
      'the output replays from its start, in order, without a gap',
    );
    await again.kill();

    // Connecting to a running sandbox keeps it running and never shortens its timeout.
    const endBefore = (await running.getInfo()).endAt.getTime();
    await running.connect({ timeoutMs: 30_000 });
    assert.ok((await running.getInfo()).endAt.getTime() >= endBefore - 1000, 'connect did not shorten the timeout');
  });

  test("another user's sandbox is not found whichever call asks", async () => {
    const id = running.sandboxId;
    await assert.rejects(Sandbox.getInfo(id, otherOpts), SandboxNotFoundError);
    await assert.rejects(Sandbox.setTimeout(id, 60_000, otherOpts), SandboxNotFoundError);
    await assert.rejects(Sandbox.pause(id, otherOpts), SandboxNotFoundError);
    await assert.rejects(Sandbox.connect(id, otherOpts), SandboxNotFoundError);
    await assert.rejects(Sandbox.getMetrics(id, otherOpts), SandboxNotFoundError);
    await assert.rejects(Sandbox.createSnapshot(id, { ...otherOpts, name: `stolen-${run}` }), SandboxNotFoundError);
    assert.equal(await Sandbox.kill(id, otherOpts), false);
    assert.deepEqual(await Sandbox.list(otherOpts).nextItems(), []);
    assert.equal((await Sandbox.getInfo(id, opts)).state, 'running', 'still running for its owner');
  });

  test('a bad API key is an AuthenticationError', async () => {
    const bad = { ...opts, apiKey: `e2b_${'0'.repeat(40)}` };
    await assert.rejects(Sandbox.list(bad).nextItems(), AuthenticationError);
    await assert.rejects(Sandbox.getInfo(running.sandboxId, bad), AuthenticationError);
  });

  test("over the plan's quota is a RateLimitError", async () => {
    await assert.rejects(Sandbox.create(tinyOpts), (error: Error) => error instanceof RateLimitError && /quota/.test(error.message));
    assert.deepEqual(await Sandbox.list(tinyOpts).nextItems(), [], 'no sandbox was left behind');
  });

  test("E2B's network settings map onto an allowlist egress policy, or are refused", async () => {
    const open = { allowPackageManagers: false, allowHttp: true, allowHttps: true };
    assert.deepEqual(egressPolicyOf({ templateID: 'base', allow_internet_access: false }), { ...open, allowedDomains: [], allowedCidrs: [] });
    assert.deepEqual(
      egressPolicyOf({ templateID: 'base', network: { denyOut: ['0.0.0.0/0'], allowOut: ['example.com', '*.example.org', '203.0.113.7', '198.51.100.0/24'] } }),
      {
        ...open,
        allowedDomains: ['example.com', '*.example.org'],
        allowedCidrs: ['203.0.113.7', '198.51.100.0/24'],
      },
    );
    assert.equal(egressPolicyOf({ templateID: 'base', network: { allowOut: ['example.com'] } }), null, 'allowOut alone restricts nothing');
    assert.equal(egressPolicyOf({ templateID: 'base', allow_internet_access: true }), null);
    // A blocklist has no allowlist equivalent: refused before anything is made.
    await assert.rejects(
      Sandbox.create({ ...opts, network: { denyOut: ['203.0.113.0/24'] } }),
      (error: Error) => error instanceof SandboxError && /allowlists/.test(error.message),
    );
  });

  test('network.allowOut with denyOut all: the sandbox runs under that allowlist, enforced', async () => {
    // Guests here reach no outside network, so what is checked is the policy the VM runs under, through sandboxd's own
    // API; egress/egress-policy.test.ts shows such a policy holding against real traffic.
    const fenced = await Sandbox.create({ ...opts, network: { denyOut: ['0.0.0.0/0'], allowOut: ['registry.npmjs.org', '203.0.113.7'] } });
    try {
      const session = await call(server, 'GET', `/v1/sessions/session/${fenced.sandboxId}`, { apiKey: opts.apiKey });
      assert.equal(session.status, 200, session.text);
      const policy = await call(server, 'GET', `/v1/vms/${session.body.vm_id}/egress`, { apiKey: opts.apiKey });
      assert.equal(policy.status, 200, policy.text);
      assert.deepEqual(policy.body.allowed_domains, ['registry.npmjs.org']);
      assert.deepEqual(policy.body.allowed_cidrs, ['203.0.113.7/32']);
      assert.equal(policy.body.enforced, true, 'the host enforces it on the running VM');
      const ofSession = await call(server, 'GET', `/v1/sessions/${fenced.sandboxId}/egress`, { apiKey: opts.apiKey });
      assert.equal(ofSession.body.source, 'session', "the sandbox's session holds it: a resumed VM starts under it again");
      assert.deepEqual(ofSession.body.allowed_domains, ['registry.npmjs.org']);
      // The sandbox without network settings runs under the deployment's open default.
      const plain = await call(server, 'GET', `/v1/sessions/${running.sandboxId}/egress`, { apiKey: opts.apiKey });
      assert.equal(plain.body.source, 'default');
    } finally {
      await fenced.kill();
    }
  });

  test('snapshot: create, list, start a sandbox from it, delete; kill ends a sandbox', async () => {
    await running.commands.run('echo in-the-snapshot > /home/user/snap.txt');
    const snapshot = await running.createSnapshot({ name: snapshotName });
    assert.equal(snapshot.snapshotId, snapshotName);
    assert.deepEqual(snapshot.names, [snapshotName]);
    const ofSandbox = await Sandbox.listSnapshots({ ...opts, sandboxId: running.sandboxId }).nextItems();
    assert.deepEqual(
      ofSandbox.map((item) => item.snapshotId),
      [snapshotName],
    );
    assert.deepEqual(await Sandbox.listSnapshots({ ...opts, sandboxId: paused.sandboxId }).nextItems(), []);
    assert.deepEqual(await Sandbox.listSnapshots({ ...otherOpts, sandboxId: running.sandboxId }).nextItems(), []);

    const fromSnapshot = await Sandbox.create(snapshot.snapshotId, opts);
    try {
      assert.equal((await fromSnapshot.commands.run('cat /home/user/snap.txt')).stdout, 'in-the-snapshot\n');
    } finally {
      await fromSnapshot.kill();
    }

    await running.kill();
    await assert.rejects(Sandbox.getInfo(running.sandboxId, opts), SandboxNotFoundError);
    assert.equal(await Sandbox.kill(running.sandboxId, opts), false);
    assert.equal(await Sandbox.deleteSnapshot(snapshotName, otherOpts), false, 'another user cannot delete it');
    assert.equal(await Sandbox.deleteSnapshot(snapshotName, opts), true);
    assert.equal(await Sandbox.deleteSnapshot(snapshotName, opts), false);
    assert.deepEqual(await Sandbox.listSnapshots({ ...opts, name: snapshotName }).nextItems(), []);
  });
});
