/**
 * Volume slots on real VMs: a snapshot source boots with four empty slots; a restore from it puts images in
 * slots (the guest sees their sizes, found by serial), writes to a read-write one reach its image, a read-only
 * one never changes even if the guest writes to its device, and a VM with volumes is not captured unless told they
 * are unmounted; a running VM gets volumes swapped into its empty slots (blockdev-reopen) the same way.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_VOLUME_TOOLS } from '../../src/engine/volumes.ts';
import type { GuestImage } from '../../src/image/index.ts';
import { createDriver, guestShell, scratchDir, testImage, type RecordingDriver } from './vm-fixture.ts';

/** One line per disk of the guest: name, size in 512-byte sectors, serial. */
const DISKS = 'for d in /sys/block/vd*; do echo "${d##*/} $(cat $d/size) $(cat $d/serial 2>/dev/null)"; done';

describe('volume slots on real VMs', { timeout: 10 * 60_000 }, () => {
  let rec: RecordingDriver;
  let image: GuestImage;
  let root: string;
  let snapshotDir: string;
  let writable: string;
  let readOnly: string;

  before(async () => {
    image = await testImage();
    rec = createDriver();
    root = await scratchDir('sbx-volume-slots-');
    snapshotDir = join(root, 'snap');
    writable = join(root, 'writable.img');
    readOnly = join(root, 'read-only.img');
    for (const [file, mb] of [
      [writable, 64],
      [readOnly, 32],
    ] as const) {
      execFileSync('truncate', ['-s', `${mb}M`, file]);
      execFileSync(DEFAULT_VOLUME_TOOLS.mkfsBinary, ['-q', '-F', file]);
    }
  });
  after(async () => {
    await rec?.driver.killAll();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test('a snapshot source has four empty slots, by serial', async () => {
    const source = await rec.driver.boot({
      vmId: 'vs-src',
      runDir: join(root, 'run', 'vs-src'),
      image,
      vcpuCount: 1,
      memoryMb: 512,
      network: 'none',
      snapshotDir,
    });
    const disks = (await guestShell(source.agentSocketPath, DISKS)).output.trim().split('\n');
    assert.deepEqual(disks.slice(1), ['vdb 0 sandboxd-vol0', 'vdc 0 sandboxd-vol1', 'vdd 0 sandboxd-vol2', 'vde 0 sandboxd-vol3']);
    await rec.driver.saveSnapshot({ vmId: 'vs-src' });
  });

  test('a restore with a read-write and a read-only volume: sizes announced, writes reach only the writable image', async () => {
    const before = readFileSync(readOnly);
    const vm = await rec.driver.restore({
      vmId: 'vs-vols',
      runDir: join(root, 'run', 'vs-vols'),
      snapshotDir,
      memoryMb: 512,
      network: 'none',
      volumes: [
        { slot: 0, imagePath: writable, readOnly: false },
        { slot: 2, imagePath: readOnly, readOnly: true },
      ],
    });
    assert.deepEqual(
      vm.volumes.map((v) => v.slot),
      [0, 2],
    );
    const disks = (await guestShell(vm.agentSocketPath, DISKS)).output.trim().split('\n');
    assert.deepEqual(disks.slice(1), ['vdb 131072 sandboxd-vol0', 'vdc 0 sandboxd-vol1', 'vdd 65536 sandboxd-vol2', 'vde 0 sandboxd-vol3']);
    const wrote = await guestShell(
      vm.agentSocketPath,
      'mkdir -p /w /r && mount /dev/vdb /w && echo written > /w/f && umount /w && mount -o ro /dev/vdd /r && ls /r && umount /r && dd if=/dev/zero of=/dev/vdd bs=1M count=4 conv=fsync 2>&1; sync',
    );
    assert.match(wrote.output, /lost\+found/);
    await assert.rejects(rec.driver.captureSnapshot({ vmId: 'vs-vols', snapshotDir: join(root, 'capture'), then: 'run' }), /volumes attached/);
    await rec.driver.kill('vs-vols');
    assert.ok(readFileSync(readOnly).equals(before), 'the read-only image did not change, though the guest wrote to its device');
    const dumped = execFileSync('/usr/sbin/debugfs', ['-R', 'cat /f', writable], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    assert.equal(dumped, 'written\n');
  });

  test('volumes swapped into a running VM (as one from the warm pool): sizes seen, writes reach only the writable image; a taken slot is refused', async (t) => {
    const before = readFileSync(readOnly);
    const restoreStarted = performance.now();
    const vm = await rec.driver.restore({ vmId: 'vs-hot', runDir: join(root, 'run', 'vs-hot'), snapshotDir, memoryMb: 512, network: 'none' });
    const restoreMs = performance.now() - restoreStarted;
    assert.deepEqual(vm.volumes, []);
    const attachStarted = performance.now();
    await rec.driver.attachVolumes!('vs-hot', [
      { slot: 1, imagePath: writable, readOnly: false },
      { slot: 3, imagePath: readOnly, readOnly: true },
    ]);
    const attachMs = performance.now() - attachStarted;
    const seen = await guestShell(
      vm.agentSocketPath,
      `for i in $(seq 100); do [ "$(cat /sys/block/vdc/size)" != 0 ] && [ "$(cat /sys/block/vde/size)" != 0 ] && break; sleep 0.05; done; ${DISKS}`,
    );
    const seenMs = performance.now() - attachStarted;
    t.diagnostic(
      `restore (empty slots) ${Math.round(restoreMs)} ms; two volumes swapped in ${Math.round(attachMs)} ms, seen by the guest after ${Math.round(seenMs)} ms`,
    );
    assert.deepEqual(seen.output.trim().split('\n').slice(1), [
      'vdb 0 sandboxd-vol0',
      'vdc 131072 sandboxd-vol1',
      'vdd 0 sandboxd-vol2',
      'vde 65536 sandboxd-vol3',
    ]);
    assert.deepEqual(
      rec.driver.get('vs-hot')!.volumes.map((v) => v.slot),
      [1, 3],
    );
    await assert.rejects(rec.driver.attachVolumes!('vs-hot', [{ slot: 1, imagePath: readOnly, readOnly: true }]), /holds a volume already/);
    const wrote = await guestShell(
      vm.agentSocketPath,
      'mkdir -p /w /r && mount /dev/vdc /w && echo hot > /w/hot && umount /w && mount -o ro /dev/vde /r && ls /r && umount /r && dd if=/dev/zero of=/dev/vde bs=1M count=4 conv=fsync 2>&1; sync',
    );
    assert.match(wrote.output, /lost\+found/);
    await assert.rejects(rec.driver.captureSnapshot({ vmId: 'vs-hot', snapshotDir: join(root, 'capture-hot'), then: 'run' }), /volumes attached/);
    await rec.driver.kill('vs-hot');
    assert.ok(readFileSync(readOnly).equals(before), 'the read-only image did not change, though the guest wrote to its device');
    const dumped = execFileSync('/usr/sbin/debugfs', ['-R', 'cat /hot', writable], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    assert.equal(dumped, 'hot\n');
  });

  test('bad requests: a slot out of range, two volumes in one slot, a missing image', async () => {
    const restore = (volumes: { slot: number; imagePath: string; readOnly: boolean }[]) =>
      rec.driver.restore({ vmId: 'vs-bad', runDir: join(root, 'run', 'vs-bad'), snapshotDir, memoryMb: 512, network: 'none', volumes });
    await assert.rejects(restore([{ slot: 4, imagePath: writable, readOnly: false }]), /slots are 0 to 3/);
    await assert.rejects(
      restore([
        { slot: 1, imagePath: writable, readOnly: false },
        { slot: 1, imagePath: readOnly, readOnly: true },
      ]),
      /two volumes/,
    );
    await assert.rejects(restore([{ slot: 1, imagePath: join(root, 'nothing.img'), readOnly: false }]), /no volume image/);
  });
});
