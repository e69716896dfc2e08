import { chmod, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildTmpDir, layerDir, layerLockPath } from './cache-layout.ts';
import { acquireFileLock } from './file-lock.ts';
import type { ProgressReporter } from './progress.ts';
import type { ImageLayer } from './types.ts';

/** Options of `ensureLayer`. */
export interface EnsureLayerOptions {
  cacheDir: string;
  layer: ImageLayer;
  hash: string;
  progress: ProgressReporter;
  /** Fills `tmpDir` with the layer's files; `tmpDir` is renamed into place only if this resolves. */
  build: (tmpDir: string) => Promise<void>;
  lockTimeoutMs?: number;
}

/** Result of `ensureLayer`. */
export interface LayerResult {
  dir: string;
  /** False when the layer came from the cache (including one another process built while we waited). */
  built: boolean;
}

/**
 * Returns the cached layer `<layer>/<hash>`, building it first if needed.
 *
 * Invariants: a layer directory exists only complete (it appears by rename(2) of a finished build dir on
 * the same filesystem), and at most one process builds a given layer at a time (flock per layer). A second
 * process waits for the first and then reuses its result. Leftovers of builds that died (power loss,
 * SIGKILL) are removed by the next build of the same layer, which holds the lock, so it cannot remove
 * another process' live build.
 */
export async function ensureLayer(options: EnsureLayerOptions): Promise<LayerResult> {
  const { cacheDir, layer, hash, progress } = options;
  const dir = layerDir(cacheDir, layer, hash);
  if (await exists(dir)) {
    progress.emit({ type: 'layer-cached', layer, hash });
    return { dir, built: false };
  }

  const lockPath = layerLockPath(cacheDir, layer, hash);
  const tmpRoot = buildTmpDir(cacheDir);
  await Promise.all([mkdir(dirname(lockPath), { recursive: true }), mkdir(tmpRoot, { recursive: true }), mkdir(dirname(dir), { recursive: true })]);
  const lock = await acquireFileLock(lockPath, {
    onWait: () => progress.emit({ type: 'lock-wait', layer, hash }),
    timeoutMs: options.lockTimeoutMs,
  });
  try {
    if (await exists(dir)) {
      progress.emit({ type: 'layer-cached', layer, hash });
      return { dir, built: false };
    }
    await removeLeftovers(tmpRoot, `${layer}-${hash}-`);
    const startMs = performance.now();
    const tmpDir = await mkdtemp(join(tmpRoot, `${layer}-${hash}-`));
    try {
      await options.build(tmpDir);
      // mkdtemp makes the dir 0700; a finished layer is readable by every user sharing the cache.
      await chmod(tmpDir, 0o755);
      await rename(tmpDir, dir);
    } catch (error) {
      await rm(tmpDir, { recursive: true, force: true });
      throw error;
    }
    progress.emit({ type: 'layer-built', layer, hash, buildMs: Math.round(performance.now() - startMs) });
    return { dir, built: true };
  } finally {
    await lock.release();
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Removes build dirs of this layer left by a process that died mid-build (we hold the layer's lock). */
async function removeLeftovers(tmpRoot: string, prefix: string): Promise<void> {
  const names = await readdir(tmpRoot);
  await Promise.all(names.filter((name) => name.startsWith(prefix)).map((name) => rm(join(tmpRoot, name), { recursive: true, force: true })));
}
