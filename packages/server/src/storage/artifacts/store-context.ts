/** What upload, download and garbage collection share, and the store's listing with the artifact store's errors. */
import type { ListedObject, ObjectStore } from '../object-store.ts';
import { callStore } from './artifact-errors.ts';

/** What upload, download and garbage collection share (not part of the public surface). */
export interface ArtifactStoreContext {
  readonly objects: ObjectStore;
  readonly chunkBytes: number;
  readonly concurrency: number;
  /** One object store request with retries; failures become OBJECT_STORE_UNAVAILABLE naming `doing`. */
  call<T>(doing: string, request: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Chunks this process stored or saw stored recently: a second upload does not even ask the store about them. */
  readonly knownChunks: KnownChunks;
}

/**
 * The chunks this process stored or found stored, each remembered for `ttlMs` only: a chunk no manifest names any
 * more can be deleted by a garbage collection on another node, and an upload trusting an old memory of it would
 * write a manifest naming a chunk that is gone. Within the time-to-live it asks nothing; after, one HEAD again.
 */
export class KnownChunks {
  readonly #knownAt = new Map<string, number>();

  constructor(readonly ttlMs: number) {}

  has(sha256: string): boolean {
    const knownAt = this.#knownAt.get(sha256);
    if (knownAt === undefined) return false;
    if (Date.now() - knownAt < this.ttlMs) return true;
    this.#knownAt.delete(sha256);
    return false;
  }

  add(sha256: string): void {
    // Re-inserted, so the map's order stays oldest first for the sweep below.
    this.#knownAt.delete(sha256);
    this.#knownAt.set(sha256, Date.now());
    if (this.#knownAt.size % 4096 === 0) this.#sweep();
  }

  delete(sha256: string): void {
    this.#knownAt.delete(sha256);
  }

  #sweep(): void {
    const oldest = Date.now() - this.ttlMs;
    for (const [sha256, knownAt] of this.#knownAt) {
      if (knownAt >= oldest) return;
      this.#knownAt.delete(sha256);
    }
  }
}

/**
 * A listing whose failures are the artifact store's errors. A failed page is not retried here: a generator that
 * threw is finished, and a retry would read as the end of the listing (garbage collection would then miss
 * manifests). The S3 client itself retries each request.
 */
export async function* listWithErrors(context: ArtifactStoreContext, prefix: string, doing: string, signal?: AbortSignal): AsyncGenerator<ListedObject> {
  const iterator = context.objects.list(prefix)[Symbol.asyncIterator]();
  for (;;) {
    signal?.throwIfAborted();
    const next = await callStore(context.objects.description, doing, () => iterator.next(), { delaysMs: [], signal }).catch(async (error: unknown) => {
      await iterator.return?.().catch(() => undefined);
      throw error;
    });
    if (next.done) return;
    yield next.value;
  }
}
