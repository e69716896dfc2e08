/**
 * Volumes that follow their session and no longer exclude captures (issue 37), on real VMs: a session's volumes
 * are mounted again in its next VM after one is killed (what VM 1 wrote, VM 2 reads); a pause keeps a read-write
 * volume mounted (a background process appending to a file it holds open goes on after the resume, the data
 * whole) and brings a read-only one back; a snapshot unmounts the volumes for its moment (409 naming the path
 * while a process keeps one busy), the VM keeps them mounted and writable afterwards, and a VM from the snapshot
 * has none mounted; a VM with volumes comes from the warm pool; another user gets 404 on all of it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { SandboxEngine } from '../../src/engine/sandbox-engine.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const CONTENT = `follow-${randomBytes(12).toString('hex')}`;
/** Appends 1, 2, 3… to /data/count.txt through one descriptor held open, every 100 ms. */
const APPENDER = `setsid sh -c 'echo $$ > /tmp/appender.pid; exec 3>>/data/count.txt; i=0; while :; do i=$((i+1)); echo $i >&3; sleep 0.1; done' </dev/null >/dev/null 2>&1 &`;
/** The last count, and 0 when the lines are exactly 1..n (nothing lost, nothing torn), else 1. */
const CHECK_COUNT = `awk 'NR != $1 { bad = 1 } END { print NR, bad + 0 }' /data/count.txt`;

describe('volumes follow their session through new VMs, pauses and snapshots', { timeout: 15 * 60_000 }, () => {
  let server: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let dataId: string;
  let refId: string;
  let sessionId: string;
  let vmId: string;

  before(async () => {
    server = await startTestServer();
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
    for (const name of ['data', 'ref']) {
      const created = await call(server, 'POST', '/v1/volumes', { apiKey: alice.apiKey, json: { name, size_mb: 64 } });
      assert.equal(created.status, 201, created.text);
      if (name === 'data') dataId = created.body.volume_id;
      else refId = created.body.volume_id;
    }
  });
  after(() => server?.close());

  const as = (who: { apiKey: string }) => ({ apiKey: who.apiKey });
  const bash = async (session: string, command: string) => {
    const answer = await call(server, 'POST', '/execute', { ...as(alice), json: { session_id: session, language: 'bash', command, timeout: 120 } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body as { exit_code: number; stdout: string; stderr: string; vm_id?: string };
  };
  const currentVm = async (session: string) => {
    const vms = (await call(server, 'GET', '/v1/vms', as(alice))).body as { vm_id: string; session_id: string; status: string }[];
    return vms.find((vm) => vm.session_id === session && vm.status !== 'killed');
  };

  test("a session's volumes are mounted again in its next VM, after the first was killed", async (t) => {
    const first = await call(server, 'POST', '/v1/vms', {
      ...as(alice),
      json: {
        vcpu_count: 1,
        vm_lifetime_seconds: 900,
        volumes: [
          { volume_id: dataId, mount_path: '/data' },
          { volume_id: refId, mount_path: '/ref', read_only: true },
        ],
      },
    });
    assert.equal(first.status, 200, first.text);
    sessionId = first.body.session_id;
    const wrote = await bash(sessionId, `printf %s '${CONTENT}' > /data/hello.txt`);
    assert.equal(wrote.exit_code, 0, wrote.stderr);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${first.body.vm_id}`, as(alice))).status, 200);

    // The session's next use starts VM 2, with the same volumes at the same paths and modes.
    const started = Date.now();
    const read = await bash(sessionId, 'cat /data/hello.txt; echo; findmnt -n -o OPTIONS /data | cut -d, -f1; findmnt -n -o OPTIONS /ref | cut -d, -f1');
    t.diagnostic(`the next VM with its session's two volumes answered in ${Date.now() - started} ms`);
    assert.equal(read.exit_code, 0, read.stderr);
    assert.equal(read.stdout, `${CONTENT}\nrw\nro\n`);
    const second = await currentVm(sessionId);
    assert.ok(second && second.vm_id !== first.body.vm_id, 'a new VM');
    vmId = second.vm_id;
    const record = (await call(server, 'GET', `/v1/volumes/${dataId}`, as(alice))).body;
    assert.deepEqual(record.attachments, [{ vm_id: vmId, mount_path: '/data', read_only: false }]);
    // Bob cannot reach the session, nor start a VM on it.
    assert.equal((await call(server, 'POST', '/execute', { ...as(bob), json: { session_id: sessionId, language: 'bash', command: 'true' } })).status, 404);
    assert.equal((await call(server, 'POST', '/v1/vms', { ...as(bob), json: { session_id: sessionId } })).status, 404);
  });

  test('a pause keeps the read-write volume mounted: a process appending to a file it holds open goes on after the resume', async (t) => {
    const appending = await bash(sessionId, `${APPENDER} sleep 1; ${CHECK_COUNT}`);
    assert.equal(appending.exit_code, 0, appending.stderr);
    const [before] = appending.stdout.trim().split(' ').map(Number);
    assert.ok(before! > 0, appending.stdout);

    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/pause`, as(bob))).status, 404);
    const paused = await call(server, 'POST', `/v1/vms/${vmId}/pause`, as(alice));
    assert.equal(paused.status, 200, paused.text);
    t.diagnostic(`paused with two volumes in ${paused.body.pause.duration_ms} ms`);
    // Still this VM's: nobody may write it meanwhile.
    assert.deepEqual((await call(server, 'GET', `/v1/volumes/${dataId}`, as(alice))).body.attachments, [
      { vm_id: vmId, mount_path: '/data', read_only: false },
    ]);
    const other = await call(server, 'POST', '/v1/vms', { ...as(alice), json: { vcpu_count: 1, volumes: [{ volume_id: dataId, mount_path: '/data' }] } });
    assert.equal(other.status, 409, other.text);
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/resume`, as(bob))).status, 404);

    const started = Date.now();
    const resumed = await call(server, 'POST', `/v1/vms/${vmId}/resume`, as(alice));
    assert.equal(resumed.status, 200, resumed.text);
    t.diagnostic(`resumed with two volumes in ${Date.now() - started} ms`);
    const after = await bash(
      sessionId,
      `sleep 1; ${CHECK_COUNT}; findmnt -n -o OPTIONS /data | cut -d, -f1; findmnt -n -o OPTIONS /ref | cut -d, -f1; ls /ref; cat /data/hello.txt`,
    );
    assert.equal(after.exit_code, 0, after.stderr);
    const [countLine, dataMode, refMode, refList, hello] = after.stdout.split('\n');
    const [count, bad] = countLine!.split(' ').map(Number);
    assert.equal(bad, 0, `the count is whole: ${countLine}`);
    assert.ok(count! > before! + 5, `the appender went on after the resume: ${before} then ${count}`);
    assert.equal(dataMode, 'rw');
    assert.equal(refMode, 'ro', 'the read-only volume is back');
    assert.equal(refList, 'lost+found');
    assert.equal(hello, CONTENT);
  });

  test('a snapshot while a process keeps a volume busy is 409 naming its path; nothing changes', async () => {
    const busy = await call(server, 'POST', `/v1/vms/${vmId}/snapshot`, { ...as(alice), json: { name: 'busy' } });
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.body.code, 'CONFLICT');
    assert.match(busy.body.detail, / at \/data is busy/);
    // The appender is still appending, through the same descriptor.
    const still = await bash(sessionId, `a=$(wc -l < /data/count.txt); sleep 1; b=$(wc -l < /data/count.txt); [ "$b" -gt "$a" ] && findmnt -n /ref >/dev/null`);
    assert.equal(still.exit_code, 0, still.stderr);
    const stopped = await bash(sessionId, `kill $(cat /tmp/appender.pid); sleep 0.5; ${CHECK_COUNT}`);
    assert.equal(stopped.stdout.trim().split(' ')[1], '0', stopped.stdout);
    // A working directory in a volume keeps it busy too.
    const cwd = await bash(sessionId, `setsid sh -c 'cd /ref && echo $$ > /tmp/busy.pid && exec sleep 600' </dev/null >/dev/null 2>&1 & sleep 0.5`);
    assert.equal(cwd.exit_code, 0, cwd.stderr);
    const busyRef = await call(server, 'POST', `/v1/vms/${vmId}/clone`, { ...as(alice), json: {} });
    assert.equal(busyRef.status, 409, busyRef.text);
    assert.match(busyRef.body.detail, / at \/ref is busy/);
    const mounted = await bash(sessionId, 'kill $(cat /tmp/busy.pid); findmnt -n -o OPTIONS /data | cut -d, -f1; findmnt -n -o OPTIONS /ref | cut -d, -f1');
    assert.equal(mounted.stdout, 'rw\nro\n', 'both mounted as before');
  });

  test('a snapshot of a VM with volumes: the VM keeps them mounted and writable; a VM from the snapshot has none mounted', async (t) => {
    const marked = await bash(sessionId, 'echo root-disk > /root/marker.txt');
    assert.equal(marked.exit_code, 0, marked.stderr);
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/snapshot`, { ...as(bob), json: { name: 'bobs' } })).status, 404);
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/clone`, { ...as(bob), json: {} })).status, 404);
    const snapshot = await call(server, 'POST', `/v1/vms/${vmId}/snapshot`, { ...as(alice), json: { name: 'with-volumes' } });
    assert.equal(snapshot.status, 200, snapshot.text);
    t.diagnostic(`snapshot of a VM with two volumes: paused ${snapshot.body.pause_ms} ms, took ${snapshot.body.duration_ms} ms`);
    const after = await bash(sessionId, 'echo after > /data/after.txt && cat /data/hello.txt && findmnt -n -o OPTIONS /ref | cut -d, -f1');
    assert.equal(after.exit_code, 0, after.stderr);
    assert.equal(after.stdout, `${CONTENT}ro\n`);
    assert.deepEqual((await call(server, 'GET', `/v1/volumes/${dataId}`, as(alice))).body.attachments, [
      { vm_id: vmId, mount_path: '/data', read_only: false },
    ]);

    const fromSnapshot = await call(server, 'POST', '/v1/vms', { ...as(alice), json: { snapshot: 'with-volumes', vm_lifetime_seconds: 900 } });
    assert.equal(fromSnapshot.status, 200, fromSnapshot.text);
    const look = await bash(
      fromSnapshot.body.session_id,
      'cat /root/marker.txt; findmnt /data >/dev/null && echo data-mounted; findmnt /ref >/dev/null && echo ref-mounted; ls -A /data | wc -l',
    );
    assert.equal(look.exit_code, 0, look.stderr);
    assert.equal(look.stdout, 'root-disk\n0\n', 'the snapshot holds no volume: its VM sees an empty mount point');
    assert.equal((await call(server, 'DELETE', `/v1/vms/${fromSnapshot.body.vm_id}`, as(alice))).status, 200);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${vmId}`, as(alice))).status, 200);
  });

  test('a VM with volumes comes from the warm pool (its images swapped into the pooled VM), beside one restored for them', async (t) => {
    const engine = server.services.sandbox.engine as SandboxEngine;
    const pooled = () => Object.values(engine.poolCounts()).reduce((sum, n) => sum + n, 0);
    for (let waited = 0; pooled() === 0 && waited < 300; waited++) await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(pooled() > 0, 'the pool has a VM');
    const acquired: { fromPool: boolean; ms: number }[] = [];
    const onAcquired = (event: { fromPool: boolean; ms: number }) => acquired.push(event);
    engine.events.on('acquired', onAcquired);
    try {
      const started = Date.now();
      const vm = await call(server, 'POST', '/v1/vms', { ...as(alice), json: { vcpu_count: 1, volumes: [{ volume_id: dataId, mount_path: '/pool' }] } });
      const pooledMs = Date.now() - started;
      assert.equal(vm.status, 200, vm.text);
      assert.equal(acquired[0]?.fromPool, true, 'taken from the pool');
      const read = await bash(vm.body.session_id, 'cat /pool/hello.txt && echo pooled > /pool/pooled.txt && findmnt -n -o OPTIONS /pool | cut -d, -f1');
      assert.equal(read.exit_code, 0, read.stderr);
      assert.equal(read.stdout, `${CONTENT}rw\n`);
      // The pool is empty now (it refills in the background): the next one is restored for its volume.
      const restoredStarted = Date.now();
      const other = await call(server, 'POST', '/v1/vms', {
        ...as(alice),
        json: { vcpu_count: 1, volumes: [{ volume_id: refId, mount_path: '/ref', read_only: true }] },
      });
      const otherMs = Date.now() - restoredStarted;
      assert.equal(other.status, 200, other.text);
      t.diagnostic(
        `POST /v1/vms with a volume: ${pooledMs} ms from the pool (engine ${acquired[0]!.ms} ms); ${otherMs} ms ${acquired[1]?.fromPool ? 'also from the pool' : 'restored for it'} (engine ${acquired[1]?.ms} ms)`,
      );
      const look = await bash(other.body.session_id, 'ls /ref');
      assert.equal(look.stdout, 'lost+found\n');
      assert.equal((await call(server, 'DELETE', `/v1/vms/${vm.body.vm_id}`, as(alice))).status, 200);
      assert.equal((await call(server, 'DELETE', `/v1/vms/${other.body.vm_id}`, as(alice))).status, 200);
    } finally {
      engine.events.off('acquired', onAcquired);
    }
  });
});
