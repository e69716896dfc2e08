import { strict as assert } from 'node:assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findHostKernel } from '../../src/image/host-kernel.ts';
import { resolveKernelModules } from '../../src/image/kernel-modules.ts';
import { loadRecipes } from '../../src/image/recipes.ts';

describe('kernel module plan', () => {
  let fake: string;
  before(async () => {
    fake = await mkdtemp(join(tmpdir(), 'sandboxd-modules-test-'));
    await writeFile(
      join(fake, 'modules.dep'),
      [
        'kernel/drivers/virtio/virtio_ring.ko:',
        'kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko',
        'kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko',
        'kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko',
        'kernel/net/core/failover.ko:',
        'kernel/drivers/char/hw_random/virtio-rng.ko.xz: kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko',
        '',
      ].join('\n'),
    );
    await writeFile(join(fake, 'modules.builtin'), 'kernel/drivers/virt/vmgenid.ko\n');
  });
  after(async () => {
    await rm(fake, { recursive: true, force: true });
  });

  test('dependencies load before the modules that need them, each once (virtio_ring before virtio)', async () => {
    const plan = await resolveKernelModules(fake, [
      { name: 'virtio_net', optional: false },
      { name: 'virtio_rng', optional: false },
    ]);
    assert.deepEqual(
      plan.load.map((module) => module.name),
      ['virtio_ring', 'virtio', 'failover', 'net_failover', 'virtio_net', 'virtio-rng'],
    );
    assert.equal(plan.load.at(-1)?.path, join(fake, 'kernel/drivers/char/hw_random/virtio-rng.ko.xz'));
  });

  test('built-in modules are skipped, missing optional ones recorded, missing required ones fail', async () => {
    const plan = await resolveKernelModules(fake, [
      { name: 'vmgenid', optional: true },
      { name: '9p', optional: true },
    ]);
    assert.deepEqual(plan, { load: [], builtin: ['vmgenid'], missing: ['9p'] });
    await assert.rejects(resolveKernelModules(fake, [{ name: 'ext4', optional: false }]), { code: 'IMAGE_INPUT_INVALID' });
  });

  test("the recipe's module list resolves against the host kernel with virtio_ring first", async () => {
    const [kernel, recipes] = await Promise.all([findHostKernel(), loadRecipes()]);
    const plan = await resolveKernelModules(kernel.modulesDir, recipes.modules);
    const names = plan.load.map((module) => module.name);
    assert.equal(names[0], 'virtio_ring');
    for (const needed of ['virtio_mmio', 'virtio_console', 'virtio_blk', 'ext4', 'virtio_net', 'virtio-rng', 'virtio_balloon'])
      assert.ok(names.includes(needed), needed);
    assert.ok(names.indexOf('crc32c_generic') < names.indexOf('ext4'));
    assert.equal(new Set(names).size, names.length);
  });
});
