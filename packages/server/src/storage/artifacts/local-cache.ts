/**
 * The bookkeeping of a node's local copies of artifacts. The engine keeps the copies in its own directories; the
 * cache records where each is, how big, and when it was last used, and evicts the least recently used ones when
 * their total passes `limitBytes` (asking the engine which are in use and letting it remove them). Hits and
 * misses are counted per kind for the operators' hit rates.
 *
 * The index is a JSON file rewritten whole (temporary file, fsync, rename) after every change, so a crash leaves
 * the old index or the new one. An index that cannot be read (missing, or not this format) starts the cache
 * empty: copies it no longer records are the engine's to find again.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACT_KINDS, assertArtifactRef, type ArtifactKind, type ArtifactRef } from './artifact-ref.ts';

export interface ArtifactCacheOptions {
  /** The index file (its directory is created). */
  indexPath: string;
  /** The most bytes of local copies `evict` leaves recorded. */
  limitBytes: number;
}

export interface ArtifactCacheStats {
  limitBytes: number;
  usedBytes: number;
  entries: number;
  hits: Record<ArtifactKind, number>;
  misses: Record<ArtifactKind, number>;
}

interface CacheEntry {
  kind: ArtifactKind;
  id: string;
  dir: string;
  bytes: number;
  /** Order of last use: larger is more recent (a counter, so two uses in one millisecond still have an order). */
  lastUse: number;
  lastUsedAt: string;
}

interface CacheIndex {
  version: 1;
  useCounter: number;
  entries: CacheEntry[];
  hits: Record<ArtifactKind, number>;
  misses: Record<ArtifactKind, number>;
}

const zeroCounts = () => Object.fromEntries(ARTIFACT_KINDS.map((kind) => [kind, 0])) as Record<ArtifactKind, number>;
const keyOf = (ref: ArtifactRef) => `${ref.kind}/${ref.id}`;

export class ArtifactCache {
  readonly #indexPath: string;
  readonly #limitBytes: number;
  readonly #entries = new Map<string, CacheEntry>();
  #useCounter = 0;
  readonly #hits = zeroCounts();
  readonly #misses = zeroCounts();
  /** Evictions run one at a time. */
  #evicting: Promise<unknown> = Promise.resolve();

  constructor(options: ArtifactCacheOptions) {
    if (!Number.isSafeInteger(options.limitBytes) || options.limitBytes < 0)
      throw new Error(`artifact cache: limitBytes ${options.limitBytes} must be 0 or more`);
    this.#indexPath = path.resolve(options.indexPath);
    this.#limitBytes = options.limitBytes;
    this.#load();
  }

  /** A local copy of `ref` exists in `dir` (made here or downloaded), of `bytes` bytes; it counts as used now. */
  record(ref: ArtifactRef, dir: string, bytes: number): void {
    assertArtifactRef(ref);
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new Error(`artifact cache: bytes ${bytes} must be 0 or more`);
    this.#entries.set(keyOf(ref), {
      kind: ref.kind,
      id: ref.id,
      dir: path.resolve(dir),
      bytes,
      lastUse: ++this.#useCounter,
      lastUsedAt: new Date().toISOString(),
    });
    this.#save();
  }

  /** `ref`'s copy was used now (least recently used copies are evicted first). */
  touch(ref: ArtifactRef): void {
    const entry = this.#entries.get(keyOf(ref));
    if (!entry) return;
    entry.lastUse = ++this.#useCounter;
    entry.lastUsedAt = new Date().toISOString();
    this.#save();
  }

  /** Counts a lookup that found a local copy. */
  hit(ref: ArtifactRef): void {
    assertArtifactRef(ref);
    this.#hits[ref.kind] += 1;
    this.#save();
  }

  /** Counts a lookup that had to fetch from the object store. */
  miss(ref: ArtifactRef): void {
    assertArtifactRef(ref);
    this.#misses[ref.kind] += 1;
    this.#save();
  }

  /** The copy's directory when one is recorded and the directory still exists; a record whose directory is gone is dropped. */
  has(ref: ArtifactRef): string | null {
    const entry = this.#entries.get(keyOf(ref));
    if (!entry) return null;
    if (fs.existsSync(entry.dir)) return entry.dir;
    this.#entries.delete(keyOf(ref));
    this.#save();
    return null;
  }

  /** Stops recording the copy (the engine removed it, or it is no longer to be reused). */
  forget(ref: ArtifactRef): void {
    if (this.#entries.delete(keyOf(ref))) this.#save();
  }

  /**
   * Removes least recently used copies until the recorded total is within `limitBytes`, never one `inUse` says is
   * in use. `remove` deletes the copy; when it throws, the eviction stops there (what was evicted stays evicted)
   * and the error is thrown.
   */
  evict(options: {
    inUse(ref: ArtifactRef, dir: string): boolean | Promise<boolean>;
    remove(ref: ArtifactRef, dir: string): Promise<void>;
  }): Promise<{ evicted: ArtifactRef[]; freedBytes: number }> {
    const run = this.#evicting.then(() => this.#evictNow(options));
    this.#evicting = run.catch(() => undefined);
    return run;
  }

  stats(): ArtifactCacheStats {
    return { limitBytes: this.#limitBytes, usedBytes: this.#usedBytes(), entries: this.#entries.size, hits: { ...this.#hits }, misses: { ...this.#misses } };
  }

  async #evictNow(options: Parameters<ArtifactCache['evict']>[0]): Promise<{ evicted: ArtifactRef[]; freedBytes: number }> {
    const evicted: ArtifactRef[] = [];
    let freedBytes = 0;
    const oldestFirst = [...this.#entries.values()].sort((a, b) => a.lastUse - b.lastUse);
    for (const entry of oldestFirst) {
      if (this.#usedBytes() <= this.#limitBytes) break;
      const ref: ArtifactRef = { kind: entry.kind, id: entry.id };
      // Recorded again or touched while an earlier copy was being removed: it is no longer this entry.
      if (this.#entries.get(keyOf(ref)) !== entry) continue;
      if (await options.inUse(ref, entry.dir)) continue;
      await options.remove(ref, entry.dir);
      if (this.#entries.get(keyOf(ref)) === entry) this.#entries.delete(keyOf(ref));
      evicted.push(ref);
      freedBytes += entry.bytes;
      this.#save();
    }
    return { evicted, freedBytes };
  }

  #usedBytes(): number {
    let total = 0;
    for (const entry of this.#entries.values()) total += entry.bytes;
    return total;
  }

  #load(): void {
    let index: Partial<CacheIndex>;
    try {
      index = JSON.parse(fs.readFileSync(this.#indexPath, 'utf8')) as Partial<CacheIndex>;
    } catch {
      return;
    }
    if (index?.version !== 1 || !Array.isArray(index.entries)) return;
    for (const entry of index.entries) {
      if (!entry || !ARTIFACT_KINDS.includes(entry.kind) || typeof entry.id !== 'string' || typeof entry.dir !== 'string') continue;
      if (!Number.isSafeInteger(entry.bytes) || !Number.isSafeInteger(entry.lastUse)) continue;
      this.#entries.set(keyOf(entry), { ...entry });
    }
    this.#useCounter = Math.max(Number(index.useCounter) || 0, ...[...this.#entries.values()].map((entry) => entry.lastUse));
    for (const kind of ARTIFACT_KINDS) {
      this.#hits[kind] = Number(index.hits?.[kind]) || 0;
      this.#misses[kind] = Number(index.misses?.[kind]) || 0;
    }
  }

  /** Writes the index whole: a temporary file beside it, synced, renamed over it. */
  #save(): void {
    const index: CacheIndex = { version: 1, useCounter: this.#useCounter, entries: [...this.#entries.values()], hits: this.#hits, misses: this.#misses };
    fs.mkdirSync(path.dirname(this.#indexPath), { recursive: true });
    const temp = `${this.#indexPath}.${randomBytes(6).toString('hex')}.tmp`;
    const fd = fs.openSync(temp, 'wx', 0o600);
    try {
      fs.writeFileSync(fd, JSON.stringify(index));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.renameSync(temp, this.#indexPath);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw error;
    }
  }
}
