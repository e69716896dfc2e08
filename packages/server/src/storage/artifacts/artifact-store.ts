/**
 * Artifacts (templates, snapshots, pause images, volumes: whatever the engine must find again on any node) in an
 * {@link ObjectStore}, content-addressed in fixed-size chunks. Nothing here knows VMs: an artifact is a set of
 * files plus free-form JSON.
 *
 * - Chunks (`artifacts/chunks/<2 hex>/<sha256>`) are stored once however many artifacts name them: fixed offsets
 *   dedup well between snapshots of one VM and the disk layers they share. An all-zero chunk is never stored.
 * - A manifest (`artifacts/manifests/<kind>/<id>.json`) is written last: an artifact without one does not exist,
 *   so a failed upload leaves at most unreferenced chunks, which garbage collection removes after a grace period.
 * - Every chunk is checked against its SHA-256 as it is downloaded, every file against its own at the end, and a
 *   download lands in a directory beside the target that is renamed into place whole.
 *
 * Upload, download and garbage collection live in files of their own beside this one; this class holds what
 * they share (the store, the chunk size, the in-process set of chunks known to be stored).
 */
import type { ObjectStore } from '../object-store.ts';
import { callStore } from './artifact-errors.ts';
import { KnownChunks, listWithErrors, type ArtifactStoreContext } from './store-context.ts';
import {
  ARTIFACT_KINDS,
  artifactLabel,
  assertArtifactRef,
  manifestKey,
  manifestsPrefix,
  CHUNKS_PREFIX,
  type ArtifactKind,
  type ArtifactRef,
} from './artifact-ref.ts';
import { collectGarbage, type GarbageCollection } from './collect-garbage.ts';
import { downloadArtifact, type DownloadOptions } from './download-artifact.ts';
import { readManifest } from './read-manifest.ts';
import type { ArtifactManifest } from './manifest.ts';
import { uploadArtifact, type UploadFile, type UploadOptions } from './upload-artifact.ts';

export interface ArtifactStoreOptions {
  objects: ObjectStore;
  /** Chunk size in bytes: a multiple of 4096 (file system blocks, so holes stay holes), default 4 MiB. */
  chunkBytes?: number;
  /** Chunk requests at once, default 4 (each holds one chunk in memory). */
  concurrency?: number;
  /** Pauses before each retry of a failed chunk request (ms), default [200, 1000]: two retries. */
  retryDelaysMs?: number[];
  /**
   * How long a chunk this process stored or found stored is trusted to be there without asking (ms), default
   * 10 minutes. Garbage collection elsewhere may delete a chunk no manifest names any more: keep it short.
   */
  knownChunksTtlMs?: number;
}

/** Counts of one kind or user in {@link ArtifactStore.usage}. */
export interface ArtifactUsage {
  artifacts: number;
  logicalBytes: number;
  dataBytes: number;
}

export const DEFAULT_CHUNK_BYTES = 4 * 1024 * 1024;
const DEFAULT_CONCURRENCY = 4;
const DEFAULT_RETRY_DELAYS_MS = [200, 1000];
const DEFAULT_KNOWN_CHUNKS_TTL_MS = 10 * 60_000;

export class ArtifactStore {
  readonly #context: ArtifactStoreContext;

  constructor(options: ArtifactStoreOptions) {
    const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0 || chunkBytes % 4096 !== 0 || chunkBytes > 256 * 1024 * 1024) {
      throw new Error(`artifact store: chunkBytes ${chunkBytes} must be a multiple of 4096 up to 256 MiB`);
    }
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new Error(`artifact store: concurrency ${concurrency} must be a positive integer`);
    const objects = options.objects;
    const delaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.#context = {
      objects,
      chunkBytes,
      concurrency,
      knownChunks: new KnownChunks(options.knownChunksTtlMs ?? DEFAULT_KNOWN_CHUNKS_TTL_MS),
      call: (doing, request, signal) => callStore(objects.description, doing, request, { delaysMs, signal }),
    };
  }

  /** Where the artifacts are (the object store's description). */
  get description(): string {
    return this.#context.objects.description;
  }

  /**
   * Stores `files` (read chunk by chunk, never whole) as the artifact `ref`, replacing one of that name; the
   * manifest is written last. `onProgress(done, total)` counts bytes of the files read and stored (or found
   * stored). `uploadedBytes` are the bytes sent, `reusedBytes` those the store already had.
   */
  upload(ref: ArtifactRef, files: UploadFile[], options: UploadOptions): Promise<ArtifactManifest & { uploadedBytes: number; reusedBytes: number }> {
    return uploadArtifact(this.#context, ref, files, options);
  }

  /**
   * Makes `targetDir` (which must not exist) hold the artifact's files, checked, with their holes and modes; on
   * any failure nothing is left at `targetDir` nor beside it. `onProgress(done, total)` counts the bytes of
   * stored chunks fetched, out of `dataBytes`.
   */
  download(ref: ArtifactRef, targetDir: string, options: DownloadOptions = {}): Promise<ArtifactManifest & { downloadedBytes: number }> {
    return downloadArtifact(this.#context, ref, targetDir, options);
  }

  /** The artifact's manifest, or null when it does not exist. */
  async manifest(ref: ArtifactRef): Promise<ArtifactManifest | null> {
    assertArtifactRef(ref);
    return readManifest(this.#context, ref, `reading ${artifactLabel(ref)}`);
  }

  async exists(ref: ArtifactRef): Promise<boolean> {
    assertArtifactRef(ref);
    return (await this.#context.call(`looking for ${artifactLabel(ref)}`, () => this.#context.objects.head(manifestKey(ref)))) !== null;
  }

  /** Removes the manifest (the artifact is gone at once); its chunks go at the next garbage collection. */
  async delete(ref: ArtifactRef): Promise<void> {
    assertArtifactRef(ref);
    await this.#context.call(`deleting ${artifactLabel(ref)}`, () => this.#context.objects.delete(manifestKey(ref)));
  }

  /** Every artifact's manifest, of one kind or all; one deleted while listing is left out. */
  async *list(kind?: ArtifactKind): AsyncIterable<ArtifactManifest> {
    for (const each of kind ? [kind] : ARTIFACT_KINDS) {
      const prefix = manifestsPrefix(each);
      for await (const object of this.#listObjects(prefix, `listing ${each} artifacts`)) {
        if (!object.key.endsWith('.json')) continue;
        const ref = { kind: each, id: object.key.slice(prefix.length, -'.json'.length) };
        try {
          assertArtifactRef(ref);
        } catch {
          continue; // not a manifest this store wrote
        }
        const manifest = await readManifest(this.#context, ref, `listing ${each} artifacts`);
        if (manifest) yield manifest;
      }
    }
  }

  /**
   * Deletes chunks that no manifest names and that are older than `graceMs` (younger ones may belong to an upload
   * whose manifest is not written yet: `keptYoung` counts them). `dryRun` counts without deleting.
   */
  collectGarbage(options: { graceMs: number; dryRun?: boolean; signal?: AbortSignal }): Promise<GarbageCollection> {
    return collectGarbage(this.#context, this.list.bind(this), options);
  }

  /** Bytes by kind and by user (artifacts without a user are in `byKind` only), and the chunks stored. */
  async usage(): Promise<{
    byKind: Record<ArtifactKind, ArtifactUsage>;
    byUser: Map<number, ArtifactUsage>;
    chunks: { count: number; bytes: number };
  }> {
    const byKind = Object.fromEntries(ARTIFACT_KINDS.map((kind) => [kind, { artifacts: 0, logicalBytes: 0, dataBytes: 0 }])) as Record<
      ArtifactKind,
      ArtifactUsage
    >;
    const byUser = new Map<number, ArtifactUsage>();
    const add = (usage: ArtifactUsage, manifest: ArtifactManifest) => {
      usage.artifacts += 1;
      usage.logicalBytes += manifest.logicalBytes;
      usage.dataBytes += manifest.dataBytes;
    };
    for await (const manifest of this.list()) {
      add(byKind[manifest.kind], manifest);
      const userId = manifest.owner.userId;
      if (userId === null) continue;
      if (!byUser.has(userId)) byUser.set(userId, { artifacts: 0, logicalBytes: 0, dataBytes: 0 });
      add(byUser.get(userId)!, manifest);
    }
    const chunks = { count: 0, bytes: 0 };
    for await (const object of this.#listObjects(CHUNKS_PREFIX, 'counting chunks')) {
      chunks.count += 1;
      chunks.bytes += object.size;
    }
    return { byKind, byUser, chunks };
  }

  /** The store's listing, each page's failure an OBJECT_STORE_UNAVAILABLE naming `doing`. */
  #listObjects(prefix: string, doing: string) {
    return listWithErrors(this.#context, prefix, doing);
  }
}
