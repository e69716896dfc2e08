import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashInputs } from './hashing.ts';
import type { ProgressReporter } from './progress.ts';
import type { Recipes } from './recipes.ts';
import { runCommand } from './run-command.ts';

/** Bump when the mmdebstrap invocation below changes, so older bases are not reused. */
const BASE_RECIPE_VERSION = 1;

/** The Debian release of the guest; the host's kernel and busybox come from the same release. */
export const GUEST_SUITE = 'bookworm';

/** File names inside a base layer directory. */
export const BASE_FILES = { rootfs: 'rootfs.tar', info: 'base.json' } as const;

/**
 * mmdebstrap options besides the package list. Documentation, man pages and translations are left out:
 * nothing in a sandbox reads them, and they are ~20% of a minbase system.
 */
const MMDEBSTRAP_OPTIONS = [
  '--variant=minbase',
  '--mode=root',
  '--format=tar',
  '--aptopt=Acquire::Retries "3"',
  '--dpkgopt=path-exclude=/usr/share/man/*',
  '--dpkgopt=path-exclude=/usr/share/info/*',
  '--dpkgopt=path-exclude=/usr/share/doc/*',
  '--dpkgopt=path-include=/usr/share/doc/*/copyright',
  '--dpkgopt=path-exclude=/usr/share/locale/*',
  '--dpkgopt=path-include=/usr/share/locale/locale.alias',
];

/**
 * With matplotlib in the image, its font list is built once here, not by each VM's first plot (measured under TCG:
 * the first `import matplotlib.pyplot` of a VM took 6.7 s with the build, 3.9 s without).
 */
const MATPLOTLIB_FONT_CACHE_HOOK = `--customize-hook=chroot "$1" env HOME=/root MPLBACKEND=Agg python3 -c 'import matplotlib.font_manager'`;

/** The hooks a package list calls for (part of the base's hash only when there are any). */
function customizeHooks(packages: readonly string[]): string[] {
  return packages.includes('python3-matplotlib') ? [MATPLOTLIB_FONT_CACHE_HOOK] : [];
}

/** Inputs of the base layer. */
export interface BaseLayerInput {
  recipes: Recipes;
  /** One-line apt sources (`deb URI SUITE COMPONENTS`), the first one being the main suite. */
  sources: string[];
}

/**
 * The base layer's hash: the package list, the apt sources and the mmdebstrap options. The archive's
 * contents move on (security updates) without changing the hash: a base is a snapshot of the day it was
 * built, and only a recipe change (or removing the layer) rebuilds it.
 */
export function hashBaseLayer(input: BaseLayerInput): string {
  const hooks = customizeHooks(input.recipes.packages);
  return hashInputs([
    ['layer', 'base'],
    ['recipe-version', String(BASE_RECIPE_VERSION)],
    ['suite', GUEST_SUITE],
    ['options', MMDEBSTRAP_OPTIONS.join('\n')],
    ['packages', input.recipes.packages.join('\n')],
    // Absent without hooks, so the flavours' bases keep the hashes they had before hooks existed.
    ...(hooks.length > 0 ? ([['hooks', hooks.join('\n')]] as const) : []),
    ['sources', input.sources.join('\n')],
  ]);
}

/** Runs mmdebstrap into `dir/rootfs.tar` and records what went in in `base.json`. */
export async function buildBaseLayer(input: BaseLayerInput, dir: string, progress: ProgressReporter): Promise<void> {
  const tarPath = join(dir, BASE_FILES.rootfs);
  await progress.stage('base', 'mmdebstrap', (onLine) =>
    runCommand(
      'mmdebstrap',
      [
        ...MMDEBSTRAP_OPTIONS,
        ...customizeHooks(input.recipes.packages),
        `--include=${input.recipes.packages.join(',')}`,
        GUEST_SUITE,
        tarPath,
        ...input.sources,
      ],
      {
        stdout: 'lines',
        onLine,
      },
    ),
  );
  const info = {
    suite: GUEST_SUITE,
    packages: input.recipes.packages,
    sources: input.sources,
    mmdebstrapOptions: MMDEBSTRAP_OPTIONS,
    tarBytes: (await stat(tarPath)).size,
    builtAt: new Date().toISOString(),
  };
  await writeFile(join(dir, BASE_FILES.info), `${JSON.stringify(info, null, 2)}\n`);
}
