/**
 * Garbage collection: mark every chunk some manifest names, then delete the chunks not marked whose last
 * modification is older than the grace period. An upload stores its chunks before its manifest, so its chunks
 * are unreferenced until it ends: the grace period (longer than the longest upload) spares them. Manifests
 * written while the chunks were being listed are read once more before anything is deleted.
 *
 * What the grace period cannot cover: an upload that finds a chunk already stored reuses it without rewriting it,
 * so an old chunk no manifest names any more (its artifacts deleted) can be reused by an upload running while a
 * collection deletes it. Two things narrow that: the collection's second look at the manifests (an upload whose
 * manifest lands before the deletions start is safe), and the artifact store's memory of chunks known stored,
 * which lasts `knownChunksTtlMs` only (after it, an upload asks the store again). What remains is an upload that
 * found such a chunk stored before a collection deleted it and wrote its manifest after the collection's second
 * look: run collections when few uploads run. Such an artifact's download reports ARTIFACT_CORRUPT, never wrong
 * bytes.
 */
import { chunkHashOfKey, CHUNKS_PREFIX } from './artifact-ref.ts';
import type { ArtifactManifest } from './manifest.ts';
import { listWithErrors, type ArtifactStoreContext } from './store-context.ts';
import { TaskWindow } from './task-window.ts';

export interface GarbageCollection {
  /** Chunk objects in the store when it was listed. */
  chunks: number;
  /** Those a manifest names. */
  referenced: number;
  /** Unreferenced chunks older than the grace period, deleted (or, in a dry run, that would have been). */
  deleted: number;
  freedBytes: number;
  /** Unreferenced chunks spared because they are younger than the grace period. */
  keptYoung: number;
}

export async function collectGarbage(
  context: ArtifactStoreContext,
  listManifests: () => AsyncIterable<ArtifactManifest>,
  options: { graceMs: number; dryRun?: boolean; signal?: AbortSignal },
): Promise<GarbageCollection> {
  const { signal } = options;
  if (!(options.graceMs >= 0)) throw new Error(`garbage collection: graceMs ${options.graceMs} must be 0 or more`);
  const doing = 'collecting garbage';
  const cutoff = Date.now() - options.graceMs;
  const marked = new Set<string>();
  const mark = async () => {
    for await (const manifest of listManifests()) {
      signal?.throwIfAborted();
      for (const file of manifest.files) for (const chunk of file.chunks) if (chunk !== null) marked.add(chunk);
    }
  };
  await mark();

  const result: GarbageCollection = { chunks: 0, referenced: 0, deleted: 0, freedBytes: 0, keptYoung: 0 };
  const candidates: { key: string; sha256: string; size: number }[] = [];
  for await (const object of listWithErrors(context, CHUNKS_PREFIX, doing, signal)) {
    const sha256 = chunkHashOfKey(object.key);
    if (sha256 === null) continue; // not a chunk this store wrote: not ours to delete
    result.chunks += 1;
    if (marked.has(sha256)) result.referenced += 1;
    else if (object.lastModified.getTime() < cutoff) candidates.push({ key: object.key, sha256, size: object.size });
    else result.keptYoung += 1;
  }

  // Second look (every manifest again, rewritten ones included): the chunks of manifests written since the first are spared.
  await mark();
  const window = new TaskWindow(context.concurrency);
  try {
    for (const candidate of candidates) {
      if (marked.has(candidate.sha256)) {
        result.referenced += 1;
        continue;
      }
      signal?.throwIfAborted();
      result.deleted += 1;
      result.freedBytes += candidate.size;
      // Forgotten before the delete: an upload that races it asks the store again.
      context.knownChunks.delete(candidate.sha256);
      if (!options.dryRun) await window.add(() => context.call(doing, () => context.objects.delete(candidate.key), signal));
    }
    await window.drain();
  } finally {
    await window.settle();
  }
  return result;
}
