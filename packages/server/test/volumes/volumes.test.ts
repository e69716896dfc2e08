/**
 * Persistent volumes through HTTP, on real VMs (issue 16): data a VM writes to a volume is read by the next VM
 * that mounts it (read-only, where writes fail); one writer at a time (409); a mounted volume cannot be deleted
 * (409), an unmounted one can (204, its image is gone) (snapshots and pauses of VMs with volumes:
 * volumes-follow.test.ts);
 * what a VM that crashed had synced is there for the next; VMs from a user's snapshot mount volumes too; another
 * user gets 404; bad mount paths are 422 before anything starts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const CONTENT = `volume-${randomBytes(12).toString('hex')}`;

describe('persistent volumes on real VMs', { timeout: 10 * 60_000 }, () => {
  let server: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let volumeId: string;

  before(async () => {
    server = await startTestServer();
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
  });
  after(() => server?.close());

  const as = (who: { apiKey: string }) => ({ apiKey: who.apiKey });
  const startVm = (volumes: unknown[]) => call(server, 'POST', '/v1/vms', { ...as(alice), json: { vcpu_count: 1, vm_lifetime_seconds: 900, volumes } });
  const bash = async (sessionId: string, command: string) => {
    const answer = await call(server, 'POST', '/execute', { ...as(alice), json: { session_id: sessionId, language: 'bash', command, timeout: 120 } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body as { exit_code: number; stdout: string; stderr: string };
  };

  test('create, list, get; another user sees none of it', async () => {
    const created = await call(server, 'POST', '/v1/volumes', { ...as(alice), json: { name: 'data', size_mb: 64 } });
    assert.equal(created.status, 201, created.text);
    volumeId = created.body.volume_id;
    assert.match(volumeId, /^vol_[a-z2-7]{16}$/);
    assert.equal(created.body.size_mb, 64);
    assert.deepEqual(created.body.attachments, []);
    assert.equal((await call(server, 'POST', '/v1/volumes', { ...as(alice), json: { name: 'data', size_gb: 1 } })).status, 409, 'names are unique per user');
    assert.equal((await call(server, 'POST', '/v1/volumes', { ...as(alice), json: { name: 'both', size_gb: 1, size_mb: 64 } })).status, 400);
    const plan = server.config.auth.plans.pro!;
    const tooBig = await call(server, 'POST', '/v1/volumes', { ...as(alice), json: { name: 'big', size_mb: plan.diskMb - 63 } });
    assert.equal(tooBig.status, 429, `the plan's ${plan.diskMb} MiB hold 64 MiB and no more: ${tooBig.text}`);
    assert.deepEqual(
      (await call(server, 'GET', '/v1/volumes', as(alice))).body.map((v: { volume_id: string }) => v.volume_id),
      [volumeId],
    );
    assert.equal((await call(server, 'GET', `/v1/volumes/${volumeId}`, as(alice))).body.name, 'data');
    assert.equal((await call(server, 'GET', `/v1/volumes/${volumeId}`, as(bob))).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/volumes/${volumeId}`, as(bob))).status, 404);
    assert.deepEqual((await call(server, 'GET', '/v1/volumes', as(bob))).body, []);
    const stolen = await call(server, 'POST', '/v1/vms', { ...as(bob), json: { vcpu_count: 1, volumes: [{ volume_id: volumeId, mount_path: '/data' }] } });
    assert.equal(stolen.status, 404, stolen.text);
  });

  test('bad mount paths and too many volumes are 422, before any VM starts', async () => {
    for (const mountPath of [
      '/',
      'data',
      '/data/',
      '/a//b',
      '/a/../b',
      '/proc',
      '/etc/x',
      '/usr/local',
      '/opt/sandboxd/x',
      '/dev/x',
      '/sys',
      '/tmp',
      '/da ta',
      '/data;reboot',
    ]) {
      const answer = await startVm([{ volume_id: volumeId, mount_path: mountPath }]);
      assert.equal(answer.status, 422, `${mountPath}: ${answer.text}`);
    }
    const five = Array.from({ length: 5 }, (_, i) => ({ volume_id: volumeId, mount_path: `/d${i}` }));
    assert.equal((await startVm(five)).status, 422);
    const twice = await startVm([
      { volume_id: volumeId, mount_path: '/a' },
      { volume_id: volumeId, mount_path: '/b' },
    ]);
    assert.equal(twice.status, 400, twice.text);
    assert.deepEqual((await call(server, 'GET', '/v1/vms', as(alice))).body, [], 'no VM was reserved');
  });

  test('a VM writes to its volume; a second read-write mount is 409; the volume cannot be deleted', async (t) => {
    const started = Date.now();
    const first = await startVm([{ volume_id: volumeId, mount_path: '/data' }]);
    assert.equal(first.status, 200, first.text);
    t.diagnostic(`a VM with a volume started in ${Date.now() - started} ms`);
    const { vm_id: vmId, session_id: sessionId } = first.body;
    const wrote = await bash(sessionId, `printf %s '${CONTENT}' > /data/hello.txt && findmnt -n -o FSTYPE,OPTIONS /data && df -m /data | tail -1`);
    assert.equal(wrote.exit_code, 0, wrote.stderr);
    assert.match(wrote.stdout, /^ext4\s+rw,/);
    t.diagnostic(wrote.stdout.trim());
    const record = (await call(server, 'GET', `/v1/volumes/${volumeId}`, as(alice))).body;
    assert.deepEqual(record.attachments, [{ vm_id: vmId, mount_path: '/data', read_only: false }]);

    const second = await startVm([{ volume_id: volumeId, mount_path: '/data' }]);
    assert.equal(second.status, 409, second.text);
    const reader = await startVm([{ volume_id: volumeId, mount_path: '/data', read_only: true }]);
    assert.equal(reader.status, 409, 'no reader beside a writer');
    assert.equal((await call(server, 'DELETE', `/v1/volumes/${volumeId}`, as(alice))).status, 409);

    assert.equal((await call(server, 'DELETE', `/v1/vms/${vmId}`, as(alice))).status, 200);
  });

  test('the next VM mounts it read-only: the data is there, writes fail', async (t) => {
    const started = Date.now();
    const vm = await startVm([{ volume_id: volumeId, mount_path: '/mnt/in', read_only: true }]);
    assert.equal(vm.status, 200, vm.text);
    t.diagnostic(`a VM with a read-only volume started in ${Date.now() - started} ms`);
    const read = await bash(vm.body.session_id, 'cat /mnt/in/hello.txt');
    assert.equal(read.exit_code, 0, read.stderr);
    assert.equal(read.stdout, CONTENT);
    const write = await bash(vm.body.session_id, 'echo x > /mnt/in/other.txt');
    assert.notEqual(write.exit_code, 0);
    assert.match(write.stderr, /Read-only file system/);
    // Another reader may join a reader; a writer may not.
    assert.equal((await startVm([{ volume_id: volumeId, mount_path: '/data' }])).status, 409);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${vm.body.vm_id}`, as(alice))).status, 200);
  });

  test('a VM that crashes with it mounted read-write: the next VM mounts it read-only (its journal replayed in the guest) and finds what was synced', async (t) => {
    const vm = await startVm([{ volume_id: volumeId, mount_path: '/data' }]);
    assert.equal(vm.status, 200, vm.text);
    const wrote = await bash(vm.body.session_id, 'echo synced > /data/synced.txt && sync && echo unsynced > /data/late.txt');
    assert.equal(wrote.exit_code, 0, wrote.stderr);
    // A kernel crash: panic=-1 and -no-reboot end QEMU at once, with no unmount.
    void call(server, 'POST', '/execute', {
      ...as(alice),
      json: { session_id: vm.body.session_id, language: 'bash', command: 'echo c > /proc/sysrq-trigger', timeout: 30 },
    });
    const deadline = Date.now() + 60_000;
    let status = '';
    while (Date.now() < deadline) {
      const record = (await call(server, 'GET', `/v1/vms/${vm.body.vm_id}`, as(alice))).body;
      status = `${record.status}/${record.end_detail}`;
      if (record.status === 'killed') break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(status, 'killed/crashed');
    const started = Date.now();
    const reader = await startVm([{ volume_id: volumeId, mount_path: '/data', read_only: true }]);
    assert.equal(reader.status, 200, reader.text);
    t.diagnostic(`after the crash, a VM with the volume (its journal replayed) started in ${Date.now() - started} ms`);
    const read = await bash(reader.body.session_id, 'cat /data/hello.txt /data/synced.txt');
    assert.equal(read.exit_code, 0, read.stderr);
    assert.equal(read.stdout, `${CONTENT}synced\n`);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${reader.body.vm_id}`, as(alice))).status, 200);
  });

  test('a VM from a snapshot you took mounts volumes too (its snapshot has the empty slots)', async (t) => {
    const plain = await startVm([]);
    assert.equal(plain.status, 200, plain.text);
    const wrote = await bash(plain.body.session_id, 'echo from-snapshot > /root/marker.txt');
    assert.equal(wrote.exit_code, 0, wrote.stderr);
    const snapshot = await call(server, 'POST', `/v1/vms/${plain.body.vm_id}/snapshot`, { ...as(alice), json: { name: 'plain' } });
    assert.equal(snapshot.status, 200, snapshot.text);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${plain.body.vm_id}`, as(alice))).status, 200);
    const started = Date.now();
    const vm = await call(server, 'POST', '/v1/vms', {
      ...as(alice),
      json: { snapshot: 'plain', vm_lifetime_seconds: 900, volumes: [{ volume_id: volumeId, mount_path: '/srv/data' }] },
    });
    assert.equal(vm.status, 200, vm.text);
    t.diagnostic(`a VM from a user snapshot with a volume started in ${Date.now() - started} ms`);
    const read = await bash(vm.body.session_id, 'cat /root/marker.txt /srv/data/hello.txt');
    assert.equal(read.exit_code, 0, read.stderr);
    assert.equal(read.stdout, `from-snapshot\n${CONTENT}`);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${vm.body.vm_id}`, as(alice))).status, 200);
  });

  test('unmounted, it is deleted: 204, and its image is gone', async () => {
    const image = path.join(server.config.vm.vmSnapshotDir, 'volumes', `${volumeId}.img`);
    assert.ok(existsSync(image));
    const deleted = await call(server, 'DELETE', `/v1/volumes/${volumeId}`, as(alice));
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(existsSync(image), false);
    assert.equal((await call(server, 'GET', `/v1/volumes/${volumeId}`, as(alice))).status, 404);
  });
});
