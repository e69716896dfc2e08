import { hostAptSources, normalizeMirrors } from './apt-sources.ts';
import { buildBaseLayer, GUEST_SUITE, hashBaseLayer, type BaseLayerInput } from './base-layer.ts';
import { findHostKernel } from './host-kernel.ts';
import { buildKernelLayer, hashKernelLayer, type KernelLayerInput } from './kernel-layer.ts';
import { ImageBuildError } from './errors.ts';
import { ensureLayer } from './layer-store.ts';
import type { ProgressReporter } from './progress.ts';
import { loadRecipes, type Recipes } from './recipes.ts';
import type { EnsureGuestImageOptions } from './types.ts';

/** Debian's busybox-static; the initramfs (and an OCI image's injected runtime) need a static binary. */
export const BUSYBOX_PATH = '/bin/busybox';

/** What the kernel and base layers are made from. */
export type LowerLayerOptions = Pick<EnsureGuestImageOptions, 'cacheDir' | 'kernelVersion' | 'mirrors' | 'recipesDir' | 'flavour'> & {
  lockTimeoutMs: number;
  /**
   * `common`: the base of `rootfs/packages.txt` alone, without the default image's own packages (the runtime OCI
   * images get is taken from it: node and python3 with the libraries they load, not the data-analysis stack).
   */
  base?: 'image' | 'common';
};

/** The two lower layers of every guest image, hashed; each is built only when `ensure…` is called. */
export interface LowerLayers {
  recipes: Recipes;
  /** One-line apt sources the base is built from. */
  sources: string[];
  kernelVersion: string;
  kernelHash: string;
  baseHash: string;
  kernelInput: KernelLayerInput;
  baseInput: BaseLayerInput;
  /** The kernel layer's directory (vmlinux, initrd), built first if needed. */
  ensureKernel(): Promise<string>;
  /** The base layer's directory (mmdebstrap `rootfs.tar`), built first if needed. */
  ensureBase(): Promise<string>;
}

/**
 * Reads the recipes, finds the host kernel and the apt sources, and hashes the kernel and base layers. Hashing
 * reads vmlinuz and busybox (tens of milliseconds); nothing is built until `ensureKernel`/`ensureBase`.
 */
export async function resolveLowerLayers(options: LowerLayerOptions, progress: ProgressReporter): Promise<LowerLayers> {
  const [loaded, kernel, sources] = await Promise.all([
    loadRecipes(options.recipesDir),
    findHostKernel(options.kernelVersion),
    options.mirrors ? Promise.resolve(normalizeMirrors(options.mirrors, GUEST_SUITE)) : hostAptSources(GUEST_SUITE),
  ]);
  // A flavour's packages go into a base of its own (the package list is part of the base's hash); the default image
  // adds its own list instead (data-analysis packages the flavours do without).
  const recipes = withPackages(loaded, options.base === 'common' ? [] : options.flavour ? options.flavour.packages : loaded.defaultPackages);
  const kernelInput: KernelLayerInput = { kernel, busyboxPath: BUSYBOX_PATH, recipes };
  const baseInput: BaseLayerInput = { recipes, sources };
  const kernelHash = await hashKernelLayer(kernelInput);
  const baseHash = hashBaseLayer(baseInput);
  const { cacheDir, lockTimeoutMs } = options;
  return {
    recipes,
    sources,
    kernelVersion: kernel.version,
    kernelHash,
    baseHash,
    kernelInput,
    baseInput,
    ensureKernel: async () =>
      (
        await ensureLayer({
          cacheDir,
          layer: 'kernel',
          hash: kernelHash,
          progress,
          lockTimeoutMs,
          build: (dir) => buildKernelLayer(kernelInput, dir, progress),
        })
      ).dir,
    ensureBase: async () =>
      (await ensureLayer({ cacheDir, layer: 'base', hash: baseHash, progress, lockTimeoutMs, build: (dir) => buildBaseLayer(baseInput, dir, progress) })).dir,
  };
}

function withPackages(recipes: Recipes, extra: string[]): Recipes {
  for (const name of extra) {
    if (!/^[a-z0-9][a-z0-9+.-]+$/.test(name)) throw new ImageBuildError('IMAGE_INPUT_INVALID', `invalid Debian package name in a flavour: ${name}`);
  }
  return { ...recipes, packages: [...recipes.packages, ...extra.filter((name) => !recipes.packages.includes(name))] };
}
