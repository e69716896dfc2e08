import { copyFile, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createExt4Image } from '../ext4-image.ts';
import { BOOT_CONTRACT_VERSION, GUEST_FILES, uuidFromHash } from '../guest-layer.ts';
import { hashInputs, sha256 } from '../hashing.ts';
import { KERNEL_FILES } from '../kernel-layer.ts';
import { ensureLayer } from '../layer-store.ts';
import { BUSYBOX_PATH, resolveLowerLayers } from '../lower-layers.ts';
import { runCommand } from '../run-command.ts';
import { OciImageError } from './errors.ts';
import { FOREIGN_GUEST_FILES, injectRuntime, type InjectedRuntime } from './inject-runtime.ts';
import { LAYOUT_TAG, readImageConfig } from './layout.ts';
import { OciProgress } from './progress.ts';
import { pullImage, pullLayerHash, pullLayoutDir } from './pull.ts';
import { parseImageReference } from './reference.ts';
import { withRegistryAccess } from './registry-access.ts';
import { resolveManifest } from './resolve.ts';
import { ensureRuntimeLayer, hashRuntimeLayer, RUNTIME_FILES } from './runtime-layer.ts';
import type { BuildOciImageOptions, OciBuildStep, OciGuestImage, OciImageConfig } from './types.ts';

/** Bump when the build changes what an image holds (the runtime and guest-init have hashes of their own). */
const OCI_IMAGE_RECIPE_VERSION = 1;
/** Recipe of the foreign-root guest-init, relative to the recipes directory. */
const FOREIGN_GUEST_INIT = 'rootfs/foreign-guest-init';
const DEFAULT_LOCK_TIMEOUT_MS = 30 * 60 * 1000;
const GIB = 1024 ** 3;
/** Free space an automatically sized root filesystem keeps beyond its tree. */
const AUTO_SIZE_SPARE_BYTES = 512 * 1024 ** 2;

/** Contents of an OCI image's `manifest.json`. */
export interface OciImageManifest {
  schemaVersion: 1;
  bootContractVersion: number;
  hash: string;
  /** The reference of the build that made the image (later builds of the same digest reuse it). */
  reference: string;
  digest: string;
  indexDigest: string | null;
  config: OciImageConfig;
  kernelVersion: string;
  kernelArgs: string[];
  diskSizeGiB: number;
  runtime: InjectedRuntime & { hash: string };
  layers: { kernel: string; base: string; runtime: string; pull: string };
  agentSha256: string;
  builtAt: string;
  /** Milliseconds of each step of the build that made it. */
  stepMs: Partial<Record<OciBuildStep, number>>;
  files: { rootfs: { bytes: number; allocatedBytes: number }; treeBytes: number };
}

/**
 * Turns an OCI image reference into a bootable guest image: the same files as the default image (the same
 * kernel and initramfs, an ext4 root filesystem), so the VM driver boots it unchanged with `kernelArgs`.
 *
 * Steps (`OciBuildStep`): resolve the reference to a linux/amd64 manifest digest (skopeo), pull it into a cached
 * OCI layout (skopeo, digests verified), unpack it (umoci, whiteouts applied), inject the agent and its runtime
 * (`/opt/sandboxd`), make the ext4 image. The result is cached under `<cacheDir>/images/oci-image/<hash>` by
 * the manifest digest, the agent, the kernel layer, the runtime, guest-init, the disk size and this recipe's
 * version, with the layer store's lock and atomic rename: a second build of the same digest returns after the
 * resolve step's one registry request. Building needs root and the Debian packages skopeo and umoci.
 * Rejects with `OciImageError`, whose `step` says where it failed and `outputTail` what the tool said.
 */
export async function buildOciImage(options: BuildOciImageOptions): Promise<OciGuestImage> {
  const progress = new OciProgress(options.onProgress);
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const { cacheDir, signal } = options;
  const reference = parseImageReference(options.reference);
  const diskSizeGiB = options.diskSizeGiB;
  if (diskSizeGiB !== undefined && (!Number.isInteger(diskSizeGiB) || diskSizeGiB < 1 || diskSizeGiB > 1024)) {
    throw new OciImageError('OCI_INPUT_INVALID', `diskSizeGiB must be an integer from 1 to 1024, got ${diskSizeGiB}`, { step: 'resolve' });
  }

  return withRegistryAccess(reference, options, async (access) => {
    const prepared = await progress.step('resolve', async (onLine) => {
      const [agentBundle, lower] = await Promise.all([
        readFile(options.agentBundlePath).catch((error: unknown) => {
          throw new OciImageError('OCI_INPUT_INVALID', `cannot read the agent bundle ${options.agentBundlePath}`, { cause: error });
        }),
        // The runtime comes from the common base: the default image's data-analysis packages are not the runtime's.
        resolveLowerLayers({ ...options, lockTimeoutMs, base: 'common' }, progress.layers),
      ]);
      const guestInit = await readFile(join(lower.recipes.dir, FOREIGN_GUEST_INIT)).catch((error: unknown) => {
        throw new OciImageError('OCI_INPUT_INVALID', `cannot read the recipe ${FOREIGN_GUEST_INIT}`, { cause: error });
      });
      const runtimeHash = await hashRuntimeLayer(lower.baseHash, BUSYBOX_PATH);
      const manifest = await resolveManifest(reference, access, { signal, onLine });
      const hash = hashInputs([
        ['layer', 'oci-image'],
        ['recipe-version', String(OCI_IMAGE_RECIPE_VERSION)],
        ['boot-contract', String(BOOT_CONTRACT_VERSION)],
        ['digest', manifest.digest],
        ['agent-bundle', agentBundle],
        ['kernel-layer', lower.kernelHash],
        ['runtime-layer', runtimeHash],
        [FOREIGN_GUEST_INIT, guestInit],
        ['disk-size-gib', diskSizeGiB === undefined ? 'auto' : String(diskSizeGiB)],
      ]);
      return { agentBundle, lower, guestInit, runtimeHash, manifest, hash };
    });
    const { agentBundle, lower, guestInit, runtimeHash, manifest, hash } = prepared;

    const image = await ensureLayer({
      cacheDir,
      layer: 'oci-image',
      hash,
      progress: progress.layers,
      lockTimeoutMs,
      build: async (dir) => {
        requireRoot();
        const layoutDir = await progress.step('pull', (onLine) =>
          pullImage({ cacheDir, reference, digest: manifest.digest, access, progress: progress.layers, lockTimeoutMs, onLine, signal }),
        );
        const bundle = join(dir, 'bundle');
        const tree = join(bundle, 'rootfs');
        const config = await progress.step('unpack', async (onLine) => {
          const imageConfig = await readImageConfig(layoutDir);
          await runCommand('umoci', ['unpack', '--image', `${layoutDir}:${LAYOUT_TAG}`, bundle], { stdout: 'lines', onLine, signal });
          return imageConfig;
        });
        const [kernelDir, runtime] = await progress.step('runtime', async () => {
          const built = await Promise.all([
            lower.ensureKernel(),
            ensureRuntimeLayer({
              cacheDir,
              baseHash: lower.baseHash,
              ensureBase: lower.ensureBase,
              busyboxPath: BUSYBOX_PATH,
              progress: progress.layers,
              lockTimeoutMs,
            }),
          ]);
          const injected = await injectRuntime({ tree, runtimeTar: join(built[1].dir, RUNTIME_FILES.tar), agentBundle, guestInit, config, signal });
          return [built[0], { ...injected, hash: built[1].hash }] as const;
        });
        await progress.step('mkfs', async (onLine) => {
          const treeBytes = Number((await runCommand('du', ['--summarize', '--block-size=1', tree], { signal })).split('\t')[0]);
          const sizeGiB = diskSizeGiB ?? Math.max(1, Math.ceil((treeBytes + AUTO_SIZE_SPARE_BYTES) / GIB));
          const rootfsPath = join(dir, GUEST_FILES.rootfs);
          await createExt4Image(tree, rootfsPath, { sizeBytes: sizeGiB * GIB, label: 'sandboxd-root', uuid: uuidFromHash(sha256(hash)), onLine });
          await rm(bundle, { recursive: true });
          await linkOrCopy(join(kernelDir, KERNEL_FILES.vmlinux), join(dir, GUEST_FILES.kernel));
          await linkOrCopy(join(kernelDir, KERNEL_FILES.initrd), join(dir, GUEST_FILES.initrd));
          const rootfs = await stat(rootfsPath);
          const record: OciImageManifest = {
            schemaVersion: 1,
            bootContractVersion: BOOT_CONTRACT_VERSION,
            hash,
            reference: reference.canonical,
            digest: manifest.digest,
            indexDigest: manifest.indexDigest,
            config,
            kernelVersion: lower.kernelVersion,
            kernelArgs: [`sandboxd.init=${FOREIGN_GUEST_FILES.init}`],
            diskSizeGiB: sizeGiB,
            runtime,
            layers: { kernel: lower.kernelHash, base: lower.baseHash, runtime: runtimeHash, pull: pullLayerHash(manifest.digest) },
            agentSha256: sha256(agentBundle),
            builtAt: new Date().toISOString(),
            stepMs: { ...progress.stepMs },
            files: { rootfs: { bytes: rootfs.size, allocatedBytes: rootfs.blocks * 512 }, treeBytes },
          };
          await writeFile(join(dir, GUEST_FILES.manifest), `${JSON.stringify(record, null, 2)}\n`);
        });
      },
    });
    if (!image.built) progress.emit({ type: 'cached', digest: manifest.digest, hash });
    const record = JSON.parse(await readFile(join(image.dir, GUEST_FILES.manifest), 'utf8')) as OciImageManifest;
    return {
      hash,
      dir: image.dir,
      kernelPath: join(image.dir, GUEST_FILES.kernel),
      initrdPath: join(image.dir, GUEST_FILES.initrd),
      rootfsPath: join(image.dir, GUEST_FILES.rootfs),
      manifestPath: join(image.dir, GUEST_FILES.manifest),
      kernelVersion: record.kernelVersion,
      diskSizeMb: record.diskSizeGiB * 1024,
      kernelArgs: record.kernelArgs,
      reference: reference.canonical,
      digest: record.digest,
      config: record.config,
      layoutDir: pullLayoutDir(cacheDir, record.digest),
    };
  });
}

/** umoci keeps the layers' owners and mkfs.ext4 -d copies them: both need root, as for the default image. */
function requireRoot(): void {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new OciImageError(
      'OCI_NOT_ROOT',
      'building an image from an OCI image needs root (file ownership of its layers and of the ext4 image); run the build as root',
      { step: 'pull' },
    );
  }
}

/** A hard link shares the kernel layer's bytes (same filesystem); a copy is the fallback. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  await mkdir(join(to, '..'), { recursive: true });
  try {
    await link(from, to);
  } catch {
    await copyFile(from, to);
  }
}
