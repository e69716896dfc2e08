/**
 * A VM that does not come up fails with a VmBootError naming the stage it died in and the console tail,
 * and leaves nothing behind: no process, run directory, or (for a snapshot source) RAM file and overlay.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { GuestImage } from '../../src/image/index.ts';
import { VmBootError } from '../../src/vm/vm-errors.ts';
import { createDriver, scratchDir, testImage, type RecordingDriver } from './vm-fixture.ts';

describe('boot failures name their stage', { timeout: 10 * 60_000 }, () => {
  let image: GuestImage;
  let rec: RecordingDriver;
  let root: string;

  before(async () => {
    image = await testImage();
    rec = createDriver();
    await rec.driver.prepare(image);
    root = await scratchDir('sbx-fail-');
  });

  after(async () => {
    await rec?.driver.killAll();
    if (root) await rm(root, { recursive: true, force: true });
  });

  async function bootError(vmId: string, overrides: Partial<GuestImage> & { kernelArgs?: string[] }, snapshotDir?: string): Promise<VmBootError> {
    const error = await rec.driver
      .boot({
        vmId,
        runDir: join(root, 'run', vmId),
        image: { ...image, ...overrides },
        vcpuCount: 1,
        memoryMb: 256,
        network: 'none',
        snapshotDir,
        timeoutMs: 120_000,
      })
      .then(
        () => assert.fail('the boot should have failed'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof VmBootError, String(error));
    assert.equal(existsSync(join(root, 'run', vmId)), false, 'the run directory is gone');
    assert.equal(rec.driver.get(vmId), undefined);
    return error;
  }

  test('a file QEMU cannot load as a kernel fails in stage "spawn" with QEMU\'s message', async (t) => {
    const bogus = join(root, 'not-a-kernel');
    await writeFile(bogus, 'this is not a kernel\n');
    const error = await bootError('bad-kernel', { kernelPath: bogus });
    t.diagnostic(error.message.replace(/\n/g, ' | '));
    assert.equal(error.stage, 'spawn');
    assert.match(error.consoleTail, /\[qemu\]/);
  });

  test('a kernel that never reaches the initramfs fails in stage "kernel" with the console tail', async (t) => {
    // Zeros, not random bytes: the kernel skips them as padding, finds no /init and panics with a message
    // (random bytes can crash it before the console is up).
    const junk = join(root, 'empty-initrd');
    await writeFile(junk, Buffer.alloc(64 * 1024));
    const error = await bootError('bad-initrd', { initrdPath: junk });
    t.diagnostic(`${error.stage}: ${error.reason}`);
    assert.equal(error.stage, 'kernel');
    assert.match(error.consoleTail, /Kernel panic|VFS|initramfs/i);
  });

  test('an initramfs that cannot start init fails in stage "initramfs"; a snapshot source leaves no RAM file or overlay', async (t) => {
    const snapshotDir = join(root, 'snapshot');
    const error = await bootError('bad-init', { kernelArgs: ['sandboxd.init=/no/such/init'] }, snapshotDir);
    t.diagnostic(`${error.stage}: ${error.reason}`);
    assert.equal(error.stage, 'initramfs');
    assert.match(error.message, /sandboxd-error: initramfs/);
    assert.deepEqual(await readdir(snapshotDir), []);
  });

  test('the driver reports no exit event for VMs that never came up', () => {
    assert.deepEqual(rec.exits, []);
  });
});
