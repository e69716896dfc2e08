import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ImageBuildError } from './errors.ts';

/** A kernel module the initramfs should load; optional ones are skipped when the kernel lacks them. */
export interface ModuleRequest {
  name: string;
  optional: boolean;
}

/** The recipe files from `packages/server/images/`, read once per build. */
export interface Recipes {
  dir: string;
  /** `initramfs/init`: the busybox /init script. */
  initramfsInit: Buffer;
  /** `initramfs/modules.txt`, raw (hashed) and parsed. */
  modulesText: Buffer;
  modules: ModuleRequest[];
  /** `rootfs/packages.txt`, raw (hashed) and parsed. */
  packagesText: Buffer;
  packages: string[];
  /** `rootfs/default-packages.txt`: what the default image adds (no flavour). */
  defaultPackages: string[];
  /** `rootfs/guest-init`: PID 1 of the rootfs. */
  guestInit: Buffer;
  /** `rootfs/fstab`: the runtime mounts guest-init makes with one `mount -a`. */
  fstab: Buffer;
}

/** `packages/server/images`, found relative to this file so it works from any working directory. */
export function defaultRecipesDir(): string {
  return fileURLToPath(new URL('../../images/', import.meta.url));
}

/** Reads and parses the recipe files. */
export async function loadRecipes(dir: string = defaultRecipesDir()): Promise<Recipes> {
  const read = async (relative: string): Promise<Buffer> => {
    try {
      return await readFile(join(dir, relative));
    } catch (error) {
      throw new ImageBuildError('IMAGE_INPUT_INVALID', `cannot read recipe file ${join(dir, relative)}`, { cause: error });
    }
  };
  const [initramfsInit, modulesText, packagesText, defaultPackagesText, guestInit, fstab] = await Promise.all([
    read('initramfs/init'),
    read('initramfs/modules.txt'),
    read('rootfs/packages.txt'),
    read('rootfs/default-packages.txt'),
    read('rootfs/guest-init'),
    read('rootfs/fstab'),
  ]);
  const modules = parseList(modulesText).map((entry) => (entry.startsWith('?') ? { name: entry.slice(1), optional: true } : { name: entry, optional: false }));
  const packages = parseList(packagesText);
  const defaultPackages = parseList(defaultPackagesText);
  for (const name of [...packages, ...defaultPackages]) {
    if (!/^[a-z0-9][a-z0-9+.-]+$/.test(name)) throw new ImageBuildError('IMAGE_INPUT_INVALID', `invalid Debian package name in rootfs/packages.txt: ${name}`);
  }
  return { dir, initramfsInit, modulesText, modules, packagesText, packages, defaultPackages, guestInit, fstab };
}

/** One entry per line; `#` starts a comment; blank lines are ignored. */
export function parseList(text: Buffer | string): string[] {
  return String(text)
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line !== '');
}
