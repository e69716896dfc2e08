import { join } from 'node:path';
import { homedir } from 'node:os';
import type { ImageLayer } from './types.ts';

/**
 * Where things live in the image cache:
 * - `<cacheDir>/images/<layer>/<hash>/`: a finished layer; it appears by an atomic rename and is never changed.
 * - `<cacheDir>/images/tmp/<layer>-<hash>-XXXXXX/`: a build in progress (same filesystem, so rename works).
 * - `<cacheDir>/images/locks/<layer>-<hash>.lock`: the flock that serializes builds of one layer.
 */
export function imagesDir(cacheDir: string): string {
  return join(cacheDir, 'images');
}

/** Directory of one finished layer. */
export function layerDir(cacheDir: string, layer: ImageLayer, hash: string): string {
  return join(imagesDir(cacheDir), layer, hash);
}

/** Parent of in-progress build directories. */
export function buildTmpDir(cacheDir: string): string {
  return join(imagesDir(cacheDir), 'tmp');
}

/** Lock file serializing builds of one layer. */
export function layerLockPath(cacheDir: string, layer: ImageLayer, hash: string): string {
  return join(imagesDir(cacheDir), 'locks', `${layer}-${hash}.lock`);
}

/** The per-user cache every clone on the machine shares: `~/.cache/sandboxd`. */
export function defaultCacheDir(): string {
  return join(homedir(), '.cache', 'sandboxd');
}
