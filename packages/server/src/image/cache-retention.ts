/**
 * Retention of what the machine-wide caches accumulate: every agent or recipe change makes a new guest image
 * (~400 MiB) and every new image or machine a new set of snapshots (hundreds of MiB to GiBs), and the old ones
 * would stay forever. An entry's directory mtime is its "last used" mark: each engine marks what it uses when
 * it starts and then hourly while it runs, so an entry another live server uses is never older than an hour.
 * Entries not marked for the retention period are removed when an engine starts (`SANDBOXD_CACHE_RETENTION_DAYS`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { layerDir, layerLockPath } from './cache-layout.ts';
import { acquireFileLock } from './file-lock.ts';
import type { GuestImage } from './types.ts';

/** How often a running engine renews its marks. */
export const MARK_INTERVAL_MS = 3600 * 1000;

/** Sets the "last used" mark of each directory to now (a missing one is skipped). */
export async function markInUse(dirs: readonly string[]): Promise<void> {
  const now = new Date();
  await Promise.all(dirs.map((dir) => fs.promises.utimes(dir, now, now).catch(() => undefined)));
}

/** Directories directly under `parent`, other than `keep`, whose mark is older than `maxAgeMs`. */
export async function unusedEntries(parent: string, keep: readonly string[], maxAgeMs: number, nowMs = Date.now()): Promise<string[]> {
  const kept = new Set(keep.map((dir) => path.resolve(dir)));
  const names = await fs.promises.readdir(parent).catch(() => [] as string[]);
  const found: string[] = [];
  for (const name of names) {
    const dir = path.join(parent, name);
    if (kept.has(dir)) continue;
    const stats = await fs.promises.lstat(dir).catch(() => undefined);
    if (stats?.isDirectory() && nowMs - stats.mtimeMs > maxAgeMs) found.push(dir);
  }
  return found;
}

/**
 * Removes guest images other than `keep` not marked for `maxAgeMs`, each under its build lock (one being
 * built right now is skipped). Resolves the removed directories.
 */
export async function pruneGuestImages(keep: GuestImage, maxAgeMs: number): Promise<string[]> {
  const layerParent = path.dirname(keep.dir);
  const cacheDir = path.dirname(path.dirname(layerParent));
  // Only an image of the cache's own layout has siblings to prune (not one loaded from elsewhere).
  if (layerDir(cacheDir, 'guest', keep.hash) !== path.resolve(keep.dir)) return [];
  const removed: string[] = [];
  for (const dir of await unusedEntries(layerParent, [keep.dir], maxAgeMs)) {
    const hash = path.basename(dir);
    const lockPath = layerLockPath(cacheDir, 'guest', hash);
    let lock;
    try {
      lock = await acquireFileLock(lockPath, { timeoutMs: 1 });
    } catch {
      continue; // being built (or its lock is unusable): not ours to remove
    }
    try {
      await fs.promises.rm(dir, { recursive: true, force: true });
      await fs.promises.rm(lockPath, { force: true });
      removed.push(dir);
    } finally {
      await lock.release();
    }
  }
  return removed;
}
