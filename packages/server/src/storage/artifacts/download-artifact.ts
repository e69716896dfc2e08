/**
 * Download: the manifest first, then into `<target>.partial-<random>` beside the target: each file is made at
 * its size with `ftruncate` (so the chunks never stored stay holes), the stored chunks are fetched (at most
 * `concurrency` at once), checked against their SHA-256 and written at their offsets; each file is checked
 * against its own SHA-256 (fed in file order as the chunks complete), synced and given its mode; then the
 * directory is synced and renamed to the target in one step. Any failure removes the partial directory: nothing
 * half-written is ever left at the target.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ArtifactError } from './artifact-errors.ts';
import { artifactLabel, assertArtifactRef, chunkKey, type ArtifactRef } from './artifact-ref.ts';
import type { ArtifactFile, ArtifactManifest } from './manifest.ts';
import { readManifest } from './read-manifest.ts';
import type { ArtifactStoreContext } from './store-context.ts';

export interface DownloadOptions {
  /** Bytes of stored chunks fetched so far, out of the artifact's `dataBytes`. */
  onProgress?(done: number, total: number): void;
  signal?: AbortSignal;
}

export async function downloadArtifact(
  context: ArtifactStoreContext,
  ref: ArtifactRef,
  targetDir: string,
  options: DownloadOptions,
): Promise<ArtifactManifest & { downloadedBytes: number }> {
  assertArtifactRef(ref);
  const { signal } = options;
  const label = artifactLabel(ref);
  const doing = `downloading ${label}`;
  const target = path.resolve(targetDir);
  if (existsSync(target)) throw new Error(`${doing}: ${target} already exists`);
  const manifest = await readManifest(context, ref, doing, signal);
  if (!manifest) throw new ArtifactError('ARTIFACT_NOT_FOUND', `${doing}: there is no artifact ${label} in the object store ${context.objects.description}`);

  await mkdir(path.dirname(target), { recursive: true });
  const partial = `${target}.partial-${randomBytes(6).toString('hex')}`;
  await mkdir(partial, { mode: 0o700 });
  let downloadedBytes = 0;
  const progress = (bytes: number) => {
    downloadedBytes += bytes;
    options.onProgress?.(downloadedBytes, manifest.dataBytes);
  };
  try {
    const zeros = Buffer.alloc(manifest.chunkBytes);
    for (const file of manifest.files) {
      const filePath = path.join(partial, ...file.name.split('/'));
      await mkdir(path.dirname(filePath), { recursive: true, mode: 0o700 });
      const handle = await open(filePath, 'wx', 0o600);
      try {
        await handle.truncate(file.size);
        await fetchFile(context, { manifest, file, handle, zeros, doing, label, signal, progress });
        await handle.sync();
        await handle.chmod(file.mode);
      } finally {
        await handle.close();
      }
    }
    await syncDirectory(partial);
    signal?.throwIfAborted();
    await rename(partial, target);
    await syncDirectory(path.dirname(target));
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
  return { ...manifest, downloadedBytes };
}

interface FileJob {
  manifest: ArtifactManifest;
  file: ArtifactFile;
  handle: FileHandle;
  zeros: Buffer;
  doing: string;
  label: string;
  signal?: AbortSignal;
  progress(bytes: number): void;
}

/**
 * Fetches and writes one file's stored chunks, `concurrency` at once, and checks the whole file: the chunks are
 * started in order and taken back in order, so the file's hash sees its bytes in order while a few chunks travel.
 */
async function fetchFile(context: ArtifactStoreContext, job: FileJob): Promise<void> {
  const { manifest, file, handle, zeros, doing, label, signal } = job;
  const fileHash = createHash('sha256');
  /** Chunks started and not yet hashed, in file order; each resolves to its bytes (null: a hole). */
  const queue: Promise<Buffer | null>[] = [];
  const hashNext = async (length: number) => {
    const bytes = await queue.shift()!;
    fileHash.update(bytes ?? zeros.subarray(0, length));
  };
  const lengths: number[] = [];
  const corrupt = (index: number, sha256: string, why: string) =>
    new ArtifactError('ARTIFACT_CORRUPT', `${doing}: file ${file.name} chunk ${index} (${sha256}) ${why}; the artifact ${label} is damaged`);

  const fetchChunk = async (index: number, sha256: string, length: number): Promise<Buffer> => {
    const object = await context.call(doing, () => context.objects.get(chunkKey(sha256)), signal);
    if (!object) throw corrupt(index, sha256, 'is missing from the object store');
    const actual = createHash('sha256').update(object.body).digest('hex');
    if (object.body.length !== length || actual !== sha256)
      throw corrupt(index, sha256, `does not match its checksum (got ${object.body.length} bytes with SHA-256 ${actual})`);
    let written = 0;
    while (written < length) written += (await handle.write(object.body, written, length - written, index * manifest.chunkBytes + written)).bytesWritten;
    job.progress(length);
    return object.body;
  };

  try {
    for (const [index, sha256] of file.chunks.entries()) {
      signal?.throwIfAborted();
      const length = Math.min(manifest.chunkBytes, file.size - index * manifest.chunkBytes);
      const started = sha256 === null ? Promise.resolve(null) : fetchChunk(index, sha256, length);
      // Its failure is taken when its turn comes (or in the finally below), not as an unhandled rejection now.
      started.catch(() => undefined);
      queue.push(started);
      lengths.push(length);
      while (queue.length >= context.concurrency) await hashNext(lengths.shift()!);
    }
    while (queue.length > 0) await hashNext(lengths.shift()!);
  } finally {
    // A failure leaves chunks in flight: let them end before the caller closes the file and removes the directory.
    await Promise.allSettled(queue);
  }
  const actual = fileHash.digest('hex');
  if (actual !== file.sha256) {
    throw new ArtifactError(
      'ARTIFACT_CORRUPT',
      `${doing}: file ${file.name} does not match its checksum (SHA-256 ${actual}, expected ${file.sha256}); the artifact ${label} is damaged`,
    );
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
