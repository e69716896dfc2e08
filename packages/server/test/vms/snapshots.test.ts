/**
 * VMs as first-class objects through HTTP, on real VMs (issue 16): a Python variable, a written file, a background
 * process and a listening port survive a live snapshot → clone and five pause → resume cycles (exact contents
 * compared); the clone and the original diverge afterwards; clones never share identity or random state; a
 * session's paused VM resumes on its next use; a snapshot something builds on cannot be deleted; another user
 * gets 404 on every one of these objects.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, executeOk, startTestServer, type TestServer } from '../helpers/test-server.ts';

/** What the test plants in the VM and expects back exactly. */
const FILE_CONTENT = `payload-${randomBytes(12).toString('hex')}\n`;
const PORT = 8765;
/** A guest view of everything that must survive: the variable, the file, the process, the port, the identity. */
const PROBE = `echo "${[
  'cat /root/data.txt',
  'pgrep -fc "sandboxd-test-ticke[r]"',
  `curl -s -m 10 http://127.0.0.1:${PORT}/served.txt`,
  'hostname',
  'cat /proc/sys/kernel/random/boot_id',
  'cat /etc/machine-id',
]
  .map((command) => `$(${command})`)
  .join('|')}"`;

describe('snapshots, clones, pause and resume on real VMs', { timeout: 30 * 60_000 }, () => {
  let server: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let sessionId: string;
  let vmId: string;
  let snapshotId: string;
  let clone: { vm_id: string; session_id: string };

  before(async () => {
    server = await startTestServer();
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
  });
  after(() => server?.close());

  const as = (who: { apiKey: string }) => ({ apiKey: who.apiKey });
  const run = (session: string, body: Record<string, unknown>) => executeOk(server, alice.apiKey, session, body);
  const python = async (session: string, code: string) => (await run(session, { code })).stdout.trim();
  const bash = async (session: string, command: string) => (await run(session, { language: 'bash', command })).stdout.trim();
  const probe = async (session: string) => (await bash(session, PROBE)).split('|');

  test('a session VM with state: a variable, a file, a background process and a listening port', async () => {
    const created = await call(server, 'POST', '/v1/sessions/session', {
      ...as(alice),
      json: { vcpu_count: 1, vm_lifetime_seconds: 1800, metadata: { suite: 'snapshots' } },
    });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.body.source, { kind: 'template', id: 'default', name: 'default' });
    sessionId = created.body.session_id;
    assert.equal(await python(sessionId, 'import random\nx = 42\nprint(x)'), '42');
    vmId = (await call(server, 'GET', `/v1/sessions/status/${sessionId}`, as(alice))).body.vm_id;
    await bash(
      sessionId,
      [
        `printf %s '${FILE_CONTENT}' > /root/data.txt`,
        `mkdir -p /srv && printf served > /srv/served.txt`,
        // A process and a server that must outlive captures (setsid: not in the execution's process group).
        `setsid bash -c 'exec -a sandboxd-test-ticker sleep 100000' >/dev/null 2>&1 < /dev/null &`,
        `setsid python3 -m http.server ${PORT} --directory /srv >/dev/null 2>&1 < /dev/null &`,
        `for i in $(seq 50); do curl -s -m 1 http://127.0.0.1:${PORT}/served.txt >/dev/null && break; sleep 0.2; done`,
      ].join('\n'),
    );
    const [file, ticker, served] = await probe(sessionId);
    assert.deepEqual([file, ticker, served], [FILE_CONTENT.trim(), '1', 'served']);
  });

  test('a snapshot of a running VM: it runs on after the capture; the record says what it cost', async (t) => {
    const taken = await call(server, 'POST', `/v1/vms/${vmId}/snapshot`, { ...as(alice), json: { name: 'with-state', metadata: { stage: 'one' } } });
    assert.equal(taken.status, 200, taken.text);
    snapshotId = taken.body.snapshot_id;
    t.diagnostic(
      `snapshot: stopped ${taken.body.pause_ms} ms, took ${taken.body.duration_ms} ms; memory ${(taken.body.memory_bytes / 2 ** 20).toFixed(1)} MiB, disk layer ${(taken.body.disk_bytes / 2 ** 20).toFixed(1)} MiB`,
    );
    assert.match(snapshotId, /^snap_[a-z2-7]{16}$/);
    assert.equal(taken.body.status, 'ready');
    assert.deepEqual(
      [taken.body.name, taken.body.source_vm_id, taken.body.parent_id, taken.body.template_id, taken.body.vcpu_count, taken.body.memory_mb],
      ['with-state', vmId, null, 'default', 1, 512],
    );
    assert.ok(taken.body.pause_ms < 5000, `the VM was stopped ${taken.body.pause_ms} ms`);
    assert.ok(taken.body.memory_bytes > 0 && taken.body.disk_bytes > 0 && taken.body.size_bytes >= taken.body.memory_bytes + taken.body.disk_bytes);
    // The VM runs on, its state intact, and now builds its disk on the snapshot.
    assert.equal(await python(sessionId, 'print(x)'), '42');
    const vm = (await call(server, 'GET', `/v1/vms/${vmId}`, as(alice))).body;
    assert.deepEqual([vm.status, vm.base_snapshot_id], ['active', snapshotId]);
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/snapshot`, { ...as(alice), json: { name: 'with-state' } })).status, 409, 'a name is taken once');
    const listed = (await call(server, 'GET', '/v1/snapshots', as(alice))).body;
    assert.deepEqual(
      listed.map((s: { snapshot_id: string }) => s.snapshot_id),
      [snapshotId],
    );
  });

  test('a clone of the snapshot has the variable, the file, the process and the port; its identity and random state are its own', async () => {
    const cloned = await call(server, 'POST', `/v1/vms/${vmId}/clone`, { ...as(alice), json: { snapshot_name: 'with-state' } });
    assert.equal(cloned.status, 200, cloned.text);
    assert.equal(cloned.body.snapshot.snapshot_id, snapshotId);
    assert.equal(cloned.body.clones.length, 1);
    clone = cloned.body.clones[0];
    assert.notEqual(clone.vm_id, vmId);
    assert.notEqual(clone.session_id, sessionId);
    assert.deepEqual([cloned.body.clones[0].template_id, cloned.body.clones[0].base_snapshot_id], [snapshotId, snapshotId]);
    assert.equal(await python(clone.session_id, 'print(x)'), '42', 'the Python variable');
    const [file, ticker, served, host, bootId, machineId] = await probe(clone.session_id);
    const [, , , originalHost, originalBootId, originalMachineId] = await probe(sessionId);
    assert.deepEqual([file, ticker, served], [FILE_CONTENT.trim(), '1', 'served'], 'the file, the process and the port');
    assert.deepEqual([host, originalHost], [clone.vm_id, vmId]);
    assert.notEqual(bootId, originalBootId, 'boot id');
    assert.notEqual(machineId, originalMachineId, 'machine id');
    const draw = 'print(random.random(), random.getrandbits(64))';
    assert.notEqual(await python(clone.session_id, draw), await python(sessionId, draw), "Python's random state");
    // From here on they diverge.
    await python(clone.session_id, 'x = "clone"');
    await bash(clone.session_id, 'echo clone > /root/only-here.txt');
    await bash(sessionId, 'echo original > /root/only-here.txt');
    assert.equal(await python(sessionId, 'print(x)'), '42');
    assert.equal(await bash(sessionId, 'cat /root/only-here.txt'), 'original');
    assert.equal(await bash(clone.session_id, 'cat /root/only-here.txt'), 'clone');
  });

  test('five pause → resume cycles keep the variable, the file, the process, the port and the identity', async (t) => {
    const [, , , host, bootId, machineId] = await probe(sessionId);
    for (let cycle = 1; cycle <= 5; cycle++) {
      const paused = await call(server, 'POST', `/v1/vms/${vmId}/pause`, as(alice));
      assert.equal(paused.status, 200, paused.text);
      assert.deepEqual([paused.body.status, paused.body.vm_id], ['paused', vmId]);
      assert.ok(paused.body.expires_in_seconds > 0, 'the lifetime left is kept');
      const view = (await call(server, 'GET', `/v1/sessions/status/${sessionId}`, as(alice))).body;
      assert.deepEqual([view.vm_status, view.vm_alive, view.vm_id], ['paused', false, vmId]);
      const resumed = await call(server, 'POST', `/v1/vms/${vmId}/resume`, as(alice));
      assert.equal(resumed.status, 200, resumed.text);
      t.diagnostic(
        `cycle ${cycle}: pause ${paused.body.pause.duration_ms} ms (memory ${(paused.body.pause.memory_bytes / 2 ** 20).toFixed(1)} MiB); resume answered`,
      );
      assert.deepEqual([resumed.body.status, resumed.body.vm_id], ['active', vmId]);
      assert.equal(await python(sessionId, `x += 1\nprint(x)`), String(42 + cycle), 'the variable, counting the cycles');
      const [file, ticker, served, sameHost, sameBootId, sameMachineId] = await probe(sessionId);
      assert.deepEqual([file, ticker, served], [FILE_CONTENT.trim(), '1', 'served']);
      assert.deepEqual([sameHost, sameBootId, sameMachineId], [host, bootId, machineId], 'a resumed VM is the same machine');
    }
  });

  test("a paused session's VM resumes on its next use, never replaced", async () => {
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/pause`, as(alice))).status, 200);
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/pause`, as(alice))).status, 409, 'paused already');
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/snapshot`, { ...as(alice), json: { name: 'of-paused' } })).status, 409);
    const answer = await call(server, 'POST', '/execute', { ...as(alice), json: { session_id: sessionId, code: 'print(x)', timeout: 120 } });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual([answer.body.stdout.trim(), answer.body.vm_id], ['47', vmId]);
    assert.equal((await call(server, 'GET', `/v1/vms/${vmId}`, as(alice))).body.status, 'active');
  });

  test('a clone of the current state (no snapshot named): two clones, each its own machine', async () => {
    const cloned = await call(server, 'POST', `/v1/vms/${vmId}/clone`, { ...as(alice), json: { count: 2 } });
    assert.equal(cloned.status, 200, cloned.text);
    const { snapshot, clones } = cloned.body;
    assert.match(snapshot.name, new RegExp(`^${vmId}-clone-`));
    assert.equal(snapshot.parent_id, snapshotId, "its layer builds on the VM's previous snapshot");
    assert.equal(clones.length, 2);
    const views = await Promise.all(
      clones.map(async (c: { session_id: string }) => ({ x: await python(c.session_id, 'print(x)'), probe: await probe(c.session_id) })),
    );
    for (const view of views) assert.equal(view.x, '47');
    assert.notEqual(views[0]!.probe[4], views[1]!.probe[4], 'boot ids differ');
    assert.notEqual(views[0]!.probe[5], views[1]!.probe[5], 'machine ids differ');
    for (const c of clones) assert.equal((await call(server, 'DELETE', `/v1/vms/${c.vm_id}`, as(alice))).status, 200);
    // Now only the original builds on it (its disk moved on to this snapshot's layer).
    assert.equal((await call(server, 'DELETE', `/v1/snapshots/${snapshot.snapshot_id}`, as(alice))).status, 409);
  });

  test('another user gets 404 for every one of these objects and operations', async () => {
    for (const [method, url, json] of [
      ['GET', `/v1/snapshots/${snapshotId}`, undefined],
      ['DELETE', `/v1/snapshots/${snapshotId}`, undefined],
      ['POST', `/v1/vms/${vmId}/snapshot`, { name: 'stolen' }],
      ['POST', `/v1/vms/${vmId}/clone`, { snapshot_name: 'with-state' }],
      ['POST', `/v1/vms/${vmId}/pause`, undefined],
      ['POST', `/v1/vms/${vmId}/resume`, undefined],
      ['POST', '/v1/vms', { snapshot: 'with-state' }],
      ['POST', '/v1/sessions/session', { snapshot: 'with-state' }],
    ] as const) {
      const answer = await call(server, method, url, { ...as(bob), ...(json ? { json } : {}) });
      assert.equal(answer.status, 404, `${method} ${url}: ${answer.status} ${answer.text}`);
      assert.ok(!answer.text.includes(FILE_CONTENT.trim()) && !answer.text.includes('"stage"'), `${method} ${url} leaks nothing`);
    }
    assert.deepEqual((await call(server, 'GET', '/v1/snapshots', as(bob))).body, []);
  });

  test('a snapshot is deleted only once nothing builds on it; its files go with it', async () => {
    const clones = (await call(server, 'GET', '/v1/vms?status=active', as(alice))).body.filter((vm: { vm_id: string }) => vm.vm_id !== vmId);
    const blocked = await call(server, 'DELETE', `/v1/snapshots/${snapshotId}`, as(alice));
    assert.equal(blocked.status, 409, blocked.text);
    for (const vm of clones) assert.equal((await call(server, 'DELETE', `/v1/vms/${vm.vm_id}`, as(alice))).status, 200);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${vmId}`, as(alice))).status, 200);
    // The current-state snapshot builds on the named one: it goes first.
    for (const snapshot of (await call(server, 'GET', '/v1/snapshots', as(alice))).body) {
      if (snapshot.snapshot_id === snapshotId) continue;
      assert.equal((await call(server, 'DELETE', `/v1/snapshots/${snapshot.snapshot_id}`, as(alice))).status, 200);
    }
    const dir = path.join(server.config.vm.vmSnapshotDir, 'snapshots', snapshotId);
    assert.ok(existsSync(dir));
    const deleted = await call(server, 'DELETE', `/v1/snapshots/${snapshotId}`, as(alice));
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(existsSync(dir), false, 'its files are gone');
    assert.equal((await call(server, 'GET', `/v1/snapshots/${snapshotId}`, as(alice))).status, 404);
  });

  test('POST /v1/vms starts a VM from a snapshot by name in a new session; wait=false answers 202 at once', async () => {
    const vm = (await call(server, 'POST', `/v1/vms`, { ...as(alice), json: { vcpu_count: 1, name: 'fresh', metadata: { k: 'v' } } })).body;
    assert.deepEqual([vm.status, vm.name, vm.metadata, vm.template_id], ['active', 'fresh', { k: 'v' }, 'default']);
    await python(vm.session_id, 'y = "from the source"');
    assert.equal((await call(server, 'POST', `/v1/vms/${vm.vm_id}/snapshot`, { ...as(alice), json: { name: 'source' } })).status, 200);
    const started = await call(server, 'POST', '/v1/vms?wait=false', { ...as(alice), json: { snapshot: 'source', vcpu_count: 2 } });
    assert.equal(started.status, 202, started.text);
    assert.deepEqual([started.body.status, started.body.vcpu_count], ['starting', 1], 'a snapshot fixes vCPUs (and memory)');
    const session = started.body.session_id;
    assert.equal(await python(session, 'print(y)'), 'from the source');
    assert.equal((await call(server, 'POST', '/v1/vms', { ...as(alice), json: { snapshot: 'no-such-thing' } })).status, 404);
  });
});
