import { chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { layerDir } from '../cache-layout.ts';
import { hashInputs } from '../hashing.ts';
import { ensureLayer } from '../layer-store.ts';
import type { ProgressReporter } from '../progress.ts';
import { runCommand } from '../run-command.ts';
import { classifyRegistryFailure, OciImageError } from './errors.ts';
import { LAYOUT_DIR, LAYOUT_TAG } from './layout.ts';
import { pinnedReference, type ImageReference } from './reference.ts';
import { copySourceOptions, type RegistryAccess } from './registry-access.ts';
import { runSkopeo } from './skopeo.ts';

/** Bump when the pull changes what its layer holds. */
const PULL_RECIPE_VERSION = 1;

/** The pull layer's hash: the manifest digest only (content-addressed). */
export function pullLayerHash(digest: string): string {
  return hashInputs([
    ['layer', 'oci-pull'],
    ['recipe-version', String(PULL_RECIPE_VERSION)],
    ['digest', digest],
  ]);
}

/** Where the pulled OCI layout of `digest` is (or will be) in the cache. */
export function pullLayoutDir(cacheDir: string, digest: string): string {
  return join(layerDir(cacheDir, 'oci-pull', pullLayerHash(digest)), LAYOUT_DIR);
}

/** Options of `pullImage`. */
export interface PullOptions {
  cacheDir: string;
  reference: ImageReference;
  digest: string;
  access: RegistryAccess;
  progress: ProgressReporter;
  lockTimeoutMs: number;
  onLine: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * The `pull` step: copies the image manifest `digest` with its config and layers into an OCI layout, cached as
 * the layer `oci-pull/<hash of the digest>/layout` (tag `image`). skopeo checks every blob against its digest
 * and the manifest against the one asked for. Keyed by content only: builds of the same digest, from any
 * repository or with another agent, reuse it. Resolves the layout's directory.
 */
export async function pullImage(options: PullOptions): Promise<string> {
  const { reference, digest, access } = options;
  const hash = pullLayerHash(digest);
  const source = pinnedReference(reference, digest);
  const layer = await ensureLayer({
    cacheDir: options.cacheDir,
    layer: 'oci-pull',
    hash,
    progress: options.progress,
    lockTimeoutMs: options.lockTimeoutMs,
    build: async (dir) => {
      const layout = join(dir, LAYOUT_DIR);
      // skopeo runs as the pull user, who may not reach the cache: the layout is mounted into its scratch
      // directory for the copy (`skopeo.ts`), and given back to root afterwards.
      const { sandbox } = access;
      const target = join(sandbox.homeDir, LAYOUT_DIR);
      // skopeo's oci: transport splits its argument at a colon.
      if (target.includes(':')) throw new OciImageError('OCI_INPUT_INVALID', `the temporary directory must not contain ":" (${target})`, { step: 'pull' });
      await mkdir(layout);
      await mkdir(target);
      await Promise.all([chown(layout, sandbox.uid, sandbox.gid), chown(target, sandbox.uid, sandbox.gid)]);
      await runSkopeo(sandbox, ['copy', '--retry-times', '2', ...copySourceOptions(access), `docker://${source}`, `oci:${target}:${LAYOUT_TAG}`], {
        stdout: 'lines',
        onLine: options.onLine,
        signal: options.signal,
        bind: { source: layout, target },
      }).catch((error: unknown) => {
        throw classifyRegistryFailure(error, 'pull', `cannot pull ${source}`);
      });
      await runCommand('chown', ['-R', '--no-dereference', '0:0', layout]);
      await writeFile(join(dir, 'pull.json'), `${JSON.stringify({ source, digest, pulledAt: new Date().toISOString() }, null, 2)}\n`);
    },
  });
  return join(layer.dir, LAYOUT_DIR);
}
