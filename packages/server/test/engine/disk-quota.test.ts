/**
 * A VM's disk on real VMs: it grows to the quota it was acquired with; writing past the quota fails with
 * ENOSPC inside the guest (its filesystem stays writable) while the VM's overlay on the host stays within the
 * quota; and deleting a file in the guest gives its space back on the host (discard passed through).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config/index.ts';
import type { SandboxEngine } from '../../src/engine/sandbox-engine.ts';
import { waitUntil } from '../helpers/wait.ts';
import { engineConfig, newDataDir, sh, startEngine } from './engine-fixture.ts';

const VM_ID = 'vm-disk-quota';
// Above the default image's own 2 GiB, so the disk has to grow.
const DISK_MB = 3072;
const MIB = 1024 * 1024;

describe('disk quota per VM on real VMs', { timeout: 20 * 60_000 }, () => {
  const dataDir = newDataDir();
  let config: Config;
  let engine: SandboxEngine;
  let grownMs: number;

  before(async () => {
    config = engineConfig(dataDir);
    engine = startEngine(config);
    await engine.start();
    const grown = new Promise<{ ms: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the disk of ${VM_ID} did not grow within 180 s`)), 180_000);
      engine.events.on('diskGrown', (event) => {
        if (event.vmId !== VM_ID) return;
        clearTimeout(timer);
        resolve(event);
      });
    });
    await engine.acquire({ vmId: VM_ID, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 900, diskMb: DISK_MB });
    grownMs = (await grown).ms;
  });
  after(async () => {
    await engine.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Bytes the VM's overlay really takes on the host (the only VM of this engine). */
  function overlayAllocatedBytes(): number {
    const [runDir, ...others] = fs.readdirSync(config.vm.runDir).filter((name) => fs.statSync(path.join(config.vm.runDir, name)).isDirectory());
    assert.ok(runDir && others.length === 0, `one VM in ${config.vm.runDir}`);
    return fs.statSync(path.join(config.vm.runDir, runDir, 'disk.qcow2')).blocks * 512;
  }

  test('the disk grows to the quota the VM was acquired with, after the VM was handed out', async (t) => {
    t.diagnostic(`grown to ${DISK_MB} MiB ${grownMs} ms after acquisition`);
    const sizeMb = Number((await sh(engine, VM_ID, 'df -BM --output=size / | tail -1')).replace(/\D/g, ''));
    assert.ok(sizeMb > DISK_MB * 0.9 && sizeMb <= DISK_MB, `the guest's root filesystem is ${sizeMb} MiB`);
  });

  test('deleting a file in the guest gives its space back on the host', async (t) => {
    await sh(engine, VM_ID, 'sync');
    const base = overlayAllocatedBytes();
    await sh(engine, VM_ID, 'dd if=/dev/zero of=/root/big bs=1M count=512 2>/dev/null && sync');
    const written = overlayAllocatedBytes();
    assert.ok(written - base >= 400 * MIB, `writing 512 MiB grew the overlay by ${((written - base) / MIB).toFixed(1)} MiB`);
    // The guest discards what it freed once its journal commits (sync), the host hole-punches the clusters.
    await sh(engine, VM_ID, 'rm /root/big && sync');
    const started = Date.now();
    const removed = await waitUntil(
      'the overlay to shrink back',
      async () => {
        const now = overlayAllocatedBytes();
        return now <= base + 32 * MIB && now;
      },
      60_000,
      250,
    );
    t.diagnostic(
      `overlay ${(base / MIB).toFixed(1)} MiB, with a 512 MiB file ${(written / MIB).toFixed(1)} MiB, ` +
        `${(removed / MIB).toFixed(1)} MiB ${Date.now() - started} ms after rm + sync`,
    );
  });

  test("a VM's disk is its quota: past it the guest gets ENOSPC, its filesystem stays writable, its file on the host stays within it", async (t) => {
    const fill = await sh(engine, VM_ID, 'dd if=/dev/zero of=/root/fill bs=1M 2>&1; sync; echo "mount=$(findmnt -no OPTIONS /)"');
    t.diagnostic(fill.trim().replace(/\n/g, ' | '));
    assert.match(fill, /No space left on device/);
    assert.match(fill, /mount=rw,/, 'the filesystem was not remounted read-only');
    const overlay = overlayAllocatedBytes();
    t.diagnostic(`overlay on the host with the guest's disk full: ${(overlay / MIB).toFixed(1)} MiB for a quota of ${DISK_MB} MiB`);
    // qcow2's own tables take ~0.2 % of the disk; the rest is at most the disk's own blocks.
    assert.ok(overlay <= DISK_MB * MIB * 1.01 + 16 * MIB, `the overlay takes ${(overlay / MIB).toFixed(1)} MiB`);

    const afterwards = await sh(
      engine,
      VM_ID,
      'rm /root/fill && echo still-writable > /root/after && cat /root/after; dmesg | grep -c "EXT4-fs error" || true',
    );
    assert.deepEqual(afterwards.trim().split('\n'), ['still-writable', '0']);
  });
});
