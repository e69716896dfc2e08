/**
 * Objects as files on this node's disk (the default store). Under the root directory (mode 0700):
 *
 * - `files/<key>`: the object's bytes, as they were given (an operator can open a screenshot as it is);
 * - `meta/<key>`: a small JSON sidecar with its content type;
 * - `tmp/`: files being written; each is renamed into place whole, so a reader sees the old object or the new
 *   one, never a part. Leftovers of a crash are removed at the next start.
 *
 * Size and last-modified time come from the data file itself (the rename that publishes the bytes carries its
 * mtime), so they always describe the bytes returned; only the content type lives beside them. A put writes the
 * sidecar first and the bytes last, so a new object is never visible without its type; an overwrite that
 * changes the type may, for the moment between the two renames, show the new type with the old bytes (callers
 * never change an object's type under one key).
 *
 * Unlike S3, a file system cannot hold both `a` and `a/b`: a put of one while the other exists fails.
 */
import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { keysOlderThan, type ListedObject, type ObjectStore, type StoredObject } from './object-store.ts';
import { assertContentType, assertObjectKey, assertObjectPrefix } from './object-validation.ts';

export interface LocalObjectStoreOptions {
  /** The root directory; created (mode 0700) at the first write. */
  rootDir: string;
}

/** Temporary files older than this at start are leftovers of a crashed write. */
const STALE_TEMP_MS = 3_600_000;
/** A put whose parent directory a concurrent delete just pruned recreates it; this many times at most. */
const PUBLISH_ATTEMPTS = 5;
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

function isMissing(error: unknown): boolean {
  // ENOTDIR: a part of the path is an object (file), so nothing lives below it; EISDIR: the key names a directory.
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

/** The local disk implementation of {@link ObjectStore}. */
export class LocalObjectStore implements ObjectStore {
  readonly description: string;
  readonly #root: string;
  readonly #filesDir: string;
  readonly #metaDir: string;
  readonly #tmpDir: string;
  #ready: Promise<void> | null = null;

  constructor(options: LocalObjectStoreOptions) {
    this.#root = path.resolve(options.rootDir);
    this.#filesDir = path.join(this.#root, 'files');
    this.#metaDir = path.join(this.#root, 'meta');
    this.#tmpDir = path.join(this.#root, 'tmp');
    this.description = `local:${this.#root}`;
  }

  async put(key: string, body: Buffer, options: { contentType: string }): Promise<void> {
    assertObjectKey(key);
    assertContentType(options.contentType);
    await this.#ensureRoot();
    try {
      await this.#publish(path.join(this.#metaDir, key), Buffer.from(JSON.stringify({ contentType: options.contentType })));
      await this.#publish(path.join(this.#filesDir, key), body);
    } catch (error) {
      throw new Error(`local object store: cannot write ${key}: ${(error as Error).message}`, { cause: error });
    }
  }

  async get(key: string): Promise<(StoredObject & { body: Buffer }) | null> {
    assertObjectKey(key);
    const handle = await open(path.join(this.#filesDir, key), 'r').catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    if (!handle) return null;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) return null;
      const body = await handle.readFile();
      return { body, size: body.length, lastModified: stats.mtime, contentType: await this.#contentType(key) };
    } finally {
      await handle.close();
    }
  }

  async getStream(key: string): Promise<(StoredObject & { stream: Readable }) | null> {
    assertObjectKey(key);
    const handle = await open(path.join(this.#filesDir, key), 'r').catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    if (!handle) return null;
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) {
        await handle.close();
        return null;
      }
      const contentType = await this.#contentType(key);
      // The stream reads the file it opened, so a concurrent overwrite or delete does not cut it short.
      return { stream: handle.createReadStream(), size: stats.size, lastModified: stats.mtime, contentType };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertObjectKey(key);
    // The bytes go first: from then on the object is gone, whatever becomes of its sidecar.
    for (const tree of [this.#filesDir, this.#metaDir]) {
      await unlink(path.join(tree, key)).catch((error: unknown) => {
        if (!isMissing(error) && (error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
      });
      await this.#pruneEmptyParents(tree, key);
    }
  }

  async head(key: string): Promise<{ size: number; lastModified: Date } | null> {
    assertObjectKey(key);
    const stats = await stat(path.join(this.#filesDir, key)).catch((error: unknown) => {
      if (isMissing(error)) return null;
      throw error;
    });
    return stats?.isFile() ? { size: stats.size, lastModified: stats.mtime } : null;
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    assertObjectPrefix(prefix);
    // Start at the deepest directory the prefix names whole; below it, keys are matched as text. A depth-first walk
    // that sorts a directory as its name followed by '/' yields keys in byte order, as AWS S3 lists them.
    const slash = prefix.lastIndexOf('/');
    const filesDir = this.#filesDir;
    async function* walk(dir: string): AsyncGenerator<ListedObject> {
      let entries: Dirent[];
      try {
        entries = await readdir(dir === '' ? filesDir : path.join(filesDir, dir), { withFileTypes: true });
      } catch (error) {
        if (isMissing(error)) return;
        throw error;
      }
      const keyOf = (entry: Dirent) => (dir === '' ? entry.name : `${dir}/${entry.name}`) + (entry.isDirectory() ? '/' : '');
      entries.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
      for (const entry of entries) {
        const key = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDirectory()) {
          if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) yield* walk(key);
        } else if (entry.isFile() && key.startsWith(prefix)) {
          // Gone since the directory was read (a concurrent delete): not listed.
          const stats = await stat(path.join(filesDir, key)).catch(() => null);
          if (stats) yield { key, size: stats.size, lastModified: stats.mtime };
        }
      }
    }
    yield* walk(slash === -1 ? '' : prefix.slice(0, slash));
  }

  async listOlderThan(prefix: string, before: Date, limit: number): Promise<string[]> {
    assertObjectPrefix(prefix);
    return keysOlderThan(this.list(prefix), before, limit);
  }

  /** Creates the root and its three trees once; removes temporary files a crashed write left behind. */
  #ensureRoot(): Promise<void> {
    this.#ready ??= (async () => {
      for (const dir of [this.#root, this.#filesDir, this.#metaDir, this.#tmpDir]) await mkdir(dir, { recursive: true, mode: 0o700 });
      for (const name of await readdir(this.#tmpDir)) {
        const file = path.join(this.#tmpDir, name);
        const stats = await stat(file).catch(() => null);
        if (stats && Date.now() - stats.mtimeMs > STALE_TEMP_MS) await unlink(file).catch(() => undefined);
      }
    })().catch((error: unknown) => {
      this.#ready = null;
      throw error;
    });
    return this.#ready;
  }

  /** Writes `bytes` to a temporary file, syncs it and renames it to `target`. */
  async #publish(target: string, bytes: Buffer): Promise<void> {
    const temp = path.join(this.#tmpDir, `${randomBytes(12).toString('hex')}.tmp`);
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(bytes);
      // Without it a crash soon after the rename can leave an empty file where the object was.
      await handle.sync();
    } catch (error) {
      await handle.close();
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await handle.close();
    try {
      for (let attempt = 1; ; attempt++) {
        await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
        try {
          await rename(temp, target);
          return;
        } catch (error) {
          // ENOENT: a delete pruned the directory between our mkdir and rename.
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= PUBLISH_ATTEMPTS) throw error;
        }
      }
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw error;
    }
  }

  async #contentType(key: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(path.join(this.#metaDir, key), 'utf8')) as { contentType?: unknown };
      return typeof meta.contentType === 'string' ? meta.contentType : DEFAULT_CONTENT_TYPE;
    } catch {
      return DEFAULT_CONTENT_TYPE;
    }
  }

  /** Removes the directories above `key` that its removal left empty, up to (not including) `tree`. */
  async #pruneEmptyParents(tree: string, key: string): Promise<void> {
    const segments = key.split('/').slice(0, -1);
    while (segments.length > 0) {
      try {
        await rmdir(path.join(tree, ...segments));
      } catch {
        return; // not empty (or already gone): the directories above it are not empty either
      }
      segments.pop();
    }
  }
}
