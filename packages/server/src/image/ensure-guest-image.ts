import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImageBuildError } from './errors.ts';
import { buildGuestLayer, GUEST_FILES, hashGuestLayer, readManifest } from './guest-layer.ts';
import { ensureLayer } from './layer-store.ts';
import { resolveLowerLayers } from './lower-layers.ts';
import { ProgressReporter } from './progress.ts';
import type { EnsureGuestImageOptions, GuestImage } from './types.ts';

/**
 * The root filesystem every VM starts with. Small on purpose: the engine grows each VM's disk and filesystem to
 * its plan's quota once it is handed out (`src/engine/disk-growth.ts`); 1 GiB holds the image (~440 MiB) and
 * what a snapshot source writes, with ~570 MiB free until then.
 */
const DEFAULT_DISK_SIZE_GIB = 2;
const DEFAULT_LOCK_TIMEOUT_MS = 30 * 60 * 1000;

/**
 * Returns the guest image for this agent bundle, building whatever is not cached yet.
 *
 * The image is three layers, each cached under `<cacheDir>/images/<layer>/<hash>` by a hash of its own
 * inputs, so changing the agent rebuilds only the last one:
 * 1. `kernel`: vmlinux (PVH) + busybox initramfs with the virtio modules; from the host's Debian kernel.
 * 2. `base`: `mmdebstrap --variant=minbase` with `images/rootfs/packages.txt`, as a tarball.
 * 3. `guest`: base + agent + guest-init as a sparse ext4 image, next to links to the kernel layer's files
 *    and a `manifest.json`. This directory is the `GuestImage`.
 *
 * A cached image is returned after hashing the inputs only (tens of milliseconds). Builds are safe against
 * concurrent callers in any process (per-layer flock, atomic rename). Building needs root; using a cached
 * image does not. Rejects with `ImageBuildError`, whose `layer`/`stage` say where a build failed.
 */
export async function ensureGuestImage(options: EnsureGuestImageOptions): Promise<GuestImage> {
  const progress = new ProgressReporter(options.onProgress);
  const diskSizeGiB = options.flavour?.diskSizeGiB ?? options.diskSizeGiB ?? DEFAULT_DISK_SIZE_GIB;
  if (!Number.isInteger(diskSizeGiB) || diskSizeGiB < 1 || diskSizeGiB > 1024) {
    throw new ImageBuildError('IMAGE_INPUT_INVALID', `diskSizeGiB must be an integer from 1 to 1024, got ${diskSizeGiB}`);
  }
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const agentBundle = await readFile(options.agentBundlePath).catch((error: unknown) => {
    throw new ImageBuildError('IMAGE_INPUT_INVALID', `cannot read the agent bundle ${options.agentBundlePath}`, { cause: error });
  });
  const lower = await resolveLowerLayers({ ...options, lockTimeoutMs }, progress);
  const { kernelHash, baseHash, recipes, sources } = lower;
  const flavour = options.flavour ? { name: options.flavour.name, files: options.flavour.files } : undefined;
  for (const file of flavour?.files ?? []) {
    if (!/^\/(?:[A-Za-z0-9._-]+\/)*[A-Za-z0-9._-]+$/.test(file.path) || file.path.split('/').includes('..')) {
      throw new ImageBuildError('IMAGE_INPUT_INVALID', `a flavour file's guest path must be absolute and plain, got ${file.path}`);
    }
  }
  const hash = hashGuestLayer({ kernelHash, baseHash, agentBundle, recipes, diskSizeGiB, ...(flavour ? { flavour } : {}) });

  // Fast path: the finished image needs neither lower layer (its kernel files are hard links or copies).
  const guest = await ensureLayer({
    cacheDir: options.cacheDir,
    layer: 'guest',
    hash,
    progress,
    lockTimeoutMs,
    build: async (tmpDir) => {
      requireRoot();
      const kernelDir = await lower.ensureKernel();
      const baseDir = await lower.ensureBase();
      await buildGuestLayer(
        {
          kernelHash,
          kernelDir,
          kernelVersion: lower.kernelVersion,
          baseHash,
          baseDir,
          recipes,
          sources,
          agentBundle,
          diskSizeGiB,
          ...(flavour ? { flavour } : {}),
        },
        hash,
        tmpDir,
        progress,
      );
    },
  });
  const manifest = await readManifest(guest.dir);
  return {
    hash,
    dir: guest.dir,
    kernelPath: join(guest.dir, GUEST_FILES.kernel),
    initrdPath: join(guest.dir, GUEST_FILES.initrd),
    rootfsPath: join(guest.dir, GUEST_FILES.rootfs),
    manifestPath: join(guest.dir, GUEST_FILES.manifest),
    kernelVersion: manifest.kernelVersion,
    diskSizeMb: manifest.inputs.diskSizeGiB * 1024,
  };
}

/**
 * mmdebstrap's root mode and the file ownership inside the ext4 image (mkfs.ext4 -d copies the owners of
 * the unpacked tree) both need root; fail with a clear message rather than build a broken image.
 */
function requireRoot(): void {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new ImageBuildError(
      'IMAGE_NOT_ROOT',
      'building the guest image needs root (mmdebstrap, file ownership in the ext4 image); run the build once as root, later runs use the cache',
    );
  }
}
