// test-lane: heavy (builds guest images in the machine-wide cache (minutes of mmdebstrap when it misses)).
/**
 * ensureGuestImage against the real shared cache (~/.cache/sandboxd): the first run on a machine builds the
 * image once (about a minute); every later run, and every other clone, reuses it. The agent bundles are
 * fixed files, so their images are cached too.
 */
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { open, readFile, stat, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { runProgram } from '../../src/host/run-program.ts';
import { BOOT_CONTRACT_VERSION, defaultCacheDir, ensureGuestImage, readManifest, type GuestImage, type ImageBuildProgress } from '../../src/image/index.ts';

const TEST_AGENT = fileURLToPath(new URL('./fixtures/test-agent.mjs', import.meta.url));
const BUILD_TIMEOUT_MS = 15 * 60 * 1000;

describe('ensureGuestImage', { timeout: BUILD_TIMEOUT_MS }, () => {
  const cacheDir = defaultCacheDir();
  let image: GuestImage;
  let scratch: string;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'sandboxd-image-test-'));
    image = await ensureGuestImage({ cacheDir, agentBundlePath: TEST_AGENT });
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  test('a second call returns the cached image quickly without building anything', async () => {
    const events: ImageBuildProgress[] = [];
    const started = performance.now();
    const again = await ensureGuestImage({ cacheDir, agentBundlePath: TEST_AGENT, onProgress: (event) => events.push(event) });
    const elapsedMs = performance.now() - started;
    assert.deepEqual(again, image);
    assert.deepEqual(
      events.map((event) => event.type),
      ['layer-cached'],
    );
    assert.ok(elapsedMs < 2000, `cached lookup took ${Math.round(elapsedMs)} ms`);
  });

  test('a different agent bundle gives a different image but reuses the kernel and base layers', async () => {
    // Fixed bytes, so this variant is built once per machine and cached like the main test image.
    const variant = join(scratch, 'agent-variant.mjs');
    await writeFile(variant, `${await readFile(TEST_AGENT, 'utf8')}// variant used by ensure-guest-image.test.ts\n`);
    const events: ImageBuildProgress[] = [];
    const other = await ensureGuestImage({ cacheDir, agentBundlePath: variant, onProgress: (event) => events.push(event) });
    assert.notEqual(other.hash, image.hash);
    assert.notEqual(other.dir, image.dir);
    const built = events.filter((event) => event.type === 'stage-start').map((event) => event.layer);
    assert.ok(!built.includes('base') && !built.includes('kernel'), `rebuilt lower layers: ${built.join(', ')}`);
    const [manifest, otherManifest] = await Promise.all([readManifest(image.dir), readManifest(other.dir)]);
    assert.deepEqual(otherManifest.layers, manifest.layers);
  });

  test('the image directory holds the kernel, initrd, sparse rootfs and a manifest describing them', async () => {
    assert.equal(image.kernelVersion.length > 0, true);
    assert.deepEqual(await magic(image.kernelPath, 0, 4), Buffer.from([0x7f, 0x45, 0x4c, 0x46]), 'vmlinux is an ELF file');
    assert.deepEqual(await magic(image.initrdPath, 0, 2), Buffer.from([0x1f, 0x8b]), 'initrd is gzipped');
    assert.deepEqual(await magic(image.rootfsPath, 1024 + 0x38, 2), Buffer.from([0x53, 0xef]), 'rootfs has the ext4 superblock magic');

    const manifest = await readManifest(image.dir);
    const agentSha = createHash('sha256')
      .update(await readFile(TEST_AGENT))
      .digest('hex');
    assert.equal(manifest.hash, image.hash);
    assert.equal(manifest.kernelVersion, image.kernelVersion);
    assert.equal(manifest.bootContractVersion, BOOT_CONTRACT_VERSION);
    assert.equal(manifest.inputs.agentSha256, agentSha);
    assert.match(manifest.guestPackages.nodejs ?? '', /^18\./);
    assert.ok(manifest.inputs.packages.includes('python3'));

    const rootfs = await stat(image.rootfsPath);
    assert.equal(manifest.files.rootfs.bytes, rootfs.size);
    assert.equal(rootfs.size, manifest.inputs.diskSizeGiB * 1024 ** 3);
    assert.equal(image.diskSizeMb, manifest.inputs.diskSizeGiB * 1024);
    // Sparse: the filesystem's free space takes no room on the host (at least 256 MiB of the image is free).
    assert.ok(rootfs.blocks * 512 < rootfs.size - 256 * 1024 ** 2, 'rootfs.ext4 is sparse');
    // Files the guest deletes leave its overlay on the host: ext4 mounts with discard by default.
    const superblock = (await runProgram('dumpe2fs', ['-h', image.rootfsPath])).stdout;
    assert.match(superblock, /^Default mount options:.*\bdiscard\b/m);
    assert.equal(manifest.files.kernel.bytes, (await stat(image.kernelPath)).size);
    assert.equal(manifest.files.initrd.bytes, (await stat(image.initrdPath)).size);
  });
});

async function magic(path: string, offset: number, length: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, offset);
    return buffer;
  } finally {
    await file.close();
  }
}
