import { lstat, mkdir, readlink, rm, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join, posix } from 'node:path';
import { OciImageError } from './errors.ts';

/**
 * Paths inside an unpacked image, which is untrusted: any of its entries may be a symlink, absolute or full of
 * `..`, that would lead a host-side `open()` out of the tree (an image's `/etc -> /etc` would make the build
 * write into the host's /etc). These helpers resolve symlinks the way the guest kernel will, against the
 * tree's root, and never follow one on the host.
 */

const MAX_SYMLINKS = 40;

/** A guest path resolved inside the tree. */
export interface ResolvedGuestPath {
  /** The path with every symlink resolved, as the guest sees it (absolute). */
  guestPath: string;
  /** Where that is on the host (inside `root`). */
  hostPath: string;
  stats: Stats;
}

/** Resolves the absolute guest path `path` inside `root`, following symlinks within the tree; undefined if missing. */
export async function resolveInTree(root: string, path: string): Promise<ResolvedGuestPath | undefined> {
  const pending = path.split('/').filter((part) => part !== '' && part !== '.');
  const done: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === '..') {
      done.pop();
      continue;
    }
    const hostPath = join(root, ...done, part);
    const stats = await lstat(hostPath).catch(() => undefined);
    if (!stats) return undefined;
    if (stats.isSymbolicLink()) {
      if (++links > MAX_SYMLINKS) return undefined;
      const target = await readlink(hostPath);
      if (target.startsWith('/')) done.length = 0;
      pending.unshift(...target.split('/').filter((segment) => segment !== '' && segment !== '.'));
      continue;
    }
    if (pending.length > 0 && !stats.isDirectory()) return undefined;
    done.push(part);
  }
  const hostPath = join(root, ...done);
  return { guestPath: posix.join('/', ...done), hostPath, stats: await stat(hostPath) };
}

/** True when `path` (a guest path) is an executable regular file in the tree. */
export async function isExecutableInTree(root: string, path: string): Promise<ResolvedGuestPath | undefined> {
  const found = await resolveInTree(root, path);
  return found && found.stats.isFile() && (found.stats.mode & 0o111) !== 0 ? found : undefined;
}

/**
 * Makes each component of the guest directory `path` a real directory in the tree, so writing below it cannot
 * leave the tree. A component that is a symlink or not a directory is either replaced by an empty directory
 * (`replace`: mount points, whose contents the boot hides anyway, and sandboxd's own `/opt/sandboxd`) or refused
 * with `OCI_UNSUPPORTED`. Resolves the host path.
 */
export async function realDirInTree(root: string, path: string, replace: (guestPath: string) => boolean): Promise<string> {
  let current = root;
  let guestPath = '';
  for (const part of path.split('/').filter((segment) => segment !== '')) {
    current = join(current, part);
    guestPath = `${guestPath}/${part}`;
    const stats = await lstat(current).catch(() => undefined);
    if (stats?.isDirectory()) continue;
    if (stats) {
      if (!replace(guestPath)) {
        throw new OciImageError(
          'OCI_UNSUPPORTED',
          `the image's ${guestPath} is ${stats.isSymbolicLink() ? 'a symlink' : 'not a directory'}; sandboxd needs a directory there`,
          { step: 'runtime' },
        );
      }
      await rm(current, { recursive: true, force: true });
    }
    await mkdir(current, { mode: 0o755 });
  }
  return current;
}
