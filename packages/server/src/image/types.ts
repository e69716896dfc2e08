/**
 * Public types of the guest image build. The image is built in three cached layers (see `ensureGuestImage`).
 */

/** A bootable guest image: everything the VM driver needs, in one directory. */
export interface GuestImage {
  /** Content hash of every input of the image (layer hashes, agent bundle, guest-init); names `dir`. */
  hash: string;
  /** Directory holding the whole image; never modified once it exists. */
  dir: string;
  /** Uncompressed kernel for PVH direct boot (`-kernel`). */
  kernelPath: string;
  /** gzipped busybox initramfs that loads the virtio modules and switch_roots (`-initrd`). */
  initrdPath: string;
  /** Sparse ext4 root filesystem; use it read-only, as the backing file of a per-VM qcow2 overlay. */
  rootfsPath: string;
  /** `manifest.json`: hashes, versions, sizes and inputs of the image. */
  manifestPath: string;
  /** Kernel release the image was built from, e.g. `6.1.0-56-amd64`. */
  kernelVersion: string;
  /** Size of the root filesystem, MiB: what a VM's disk starts with before anything grows it. */
  diskSizeMb: number;
}

/**
 * The cached layers an image is built from, each keyed by a hash of its own inputs. The `oci-*` layers are an
 * OCI image's (`oci/`): its pulled OCI layout, the runtime injected into foreign root filesystems, the image.
 */
export type ImageLayer = 'kernel' | 'base' | 'guest' | 'oci-pull' | 'oci-runtime' | 'oci-image';

/**
 * Progress of `ensureGuestImage`. `elapsedMs` always counts from the start of the call.
 * - `layer-cached`: the layer was found in the cache (nothing to build).
 * - `lock-wait`: another process is building this layer; we wait for it and then reuse its result.
 * - `stage-start` / `stage-done`: one step of a layer build (`stageMs` is the step's own duration).
 * - `output`: one line printed by a long-running command of the current stage (e.g. mmdebstrap).
 * - `layer-built`: the layer was built and is now in the cache.
 */
export type ImageBuildProgress =
  | { type: 'layer-cached'; layer: ImageLayer; hash: string; elapsedMs: number }
  | { type: 'lock-wait'; layer: ImageLayer; hash: string; elapsedMs: number }
  | { type: 'stage-start'; layer: ImageLayer; stage: string; elapsedMs: number }
  | { type: 'stage-done'; layer: ImageLayer; stage: string; elapsedMs: number; stageMs: number }
  | { type: 'output'; layer: ImageLayer; stage: string; line: string; elapsedMs: number }
  | { type: 'layer-built'; layer: ImageLayer; hash: string; elapsedMs: number; buildMs: number };

/** A file a flavour adds to the guest root filesystem. */
export interface FlavourFile {
  /** Absolute path in the guest. */
  path: string;
  content: Buffer;
  mode: number;
}

/**
 * A variant of the guest image for a built-in template (e.g. the browser's): more Debian packages in its own base
 * layer, a few more files, and its own disk size. Everything else (kernel, agent, guest-init) is the default image's.
 */
export interface ImageFlavour {
  name: string;
  packages: string[];
  files: FlavourFile[];
  diskSizeGiB: number;
}

/** Options of `ensureGuestImage`. */
export interface EnsureGuestImageOptions {
  /** Root of the shared cache (e.g. `~/.cache/sandboxd`); layers live under `<cacheDir>/images/`. */
  cacheDir: string;
  /** The agent, bundled to one ES module file; installed as `/opt/sandboxd/agent.mjs`. */
  agentBundlePath: string;
  /** Receives progress events; must not throw. */
  onProgress?: (progress: ImageBuildProgress) => void;
  /**
   * Size of the sparse ext4 root filesystem (default 1 GiB): the disk every VM starts with; the engine grows a
   * VM's disk and filesystem online to its quota after handing it out.
   */
  diskSizeGiB?: number;
  /** Kernel release to use (default: the newest with both `/boot/vmlinuz-<v>` and `/lib/modules/<v>`). */
  kernelVersion?: string;
  /**
   * Debian sources for mmdebstrap, as one-line `deb URI SUITE COMPONENTS` entries or bare mirror URLs
   * (default: the host's enabled bookworm entries from `/etc/apt/sources.list*`).
   */
  mirrors?: string[];
  /** Directory of the recipe files (default: `packages/server/images`). */
  recipesDir?: string;
  /** Give up waiting for another process' build of the same layer after this long (default 30 min). */
  lockTimeoutMs?: number;
  /** Build this flavour of the image instead of the default one (its `diskSizeGiB` wins). */
  flavour?: ImageFlavour;
}
