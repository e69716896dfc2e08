/**
 * Objects kept outside the database (screenshots, later recordings and build logs): one interface, local disk by
 * default (`local-object-store.ts`), any S3-compatible store by configuration (`s3-object-store.ts`);
 * `createObjectStore(options)` picks one. Keys are relative, `/`-separated, made of `[A-Za-z0-9._-]` segments
 * (the callers build them from ids, never from user input); a bad key is a programming error (throws).
 */
import type { Readable } from 'node:stream';

export interface StoredObject {
  contentType: string;
  size: number;
  /** When it was written. */
  lastModified: Date;
}

/** What a listing says of one object. */
export interface ListedObject {
  key: string;
  size: number;
  lastModified: Date;
}

/** The keys of `listing` last modified before `before`, at most `limit` (both stores' `listOlderThan`). */
export async function keysOlderThan(listing: AsyncIterable<ListedObject>, before: Date, limit: number): Promise<string[]> {
  const found: string[] = [];
  if (limit <= 0) return found;
  for await (const object of listing) {
    if (object.lastModified.getTime() < before.getTime()) found.push(object.key);
    if (found.length >= limit) break;
  }
  return found;
}

export interface ObjectStore {
  /** Where objects go, for logs and health (e.g. `local:/var/lib/…/objects` or `s3://bucket/prefix`). */
  readonly description: string;
  /** Writes (or replaces) the object at `key` whole: a reader never sees a half-written object. */
  put(key: string, body: Buffer, options: { contentType: string }): Promise<void>;
  /** The object's bytes, or null when there is none. */
  get(key: string): Promise<(StoredObject & { body: Buffer }) | null>;
  /** The object as a stream (for large ones), or null. */
  getStream(key: string): Promise<(StoredObject & { stream: Readable }) | null>;
  /** Its size and last-modified time without its bytes, or null when there is none. */
  head(key: string): Promise<{ size: number; lastModified: Date } | null>;
  /**
   * Every object under `prefix` (matched as text, as S3 does), read page by page as the caller iterates: a store
   * of millions of keys is never held in memory. The order is the store's (AWS S3 and the local store list in
   * byte order, some S3-compatible stores do not): callers must not rely on it.
   */
  list(prefix: string): AsyncIterable<ListedObject>;
  /** Removes it; a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Keys under `prefix` last modified before `before` (retention sweeps), at most `limit`. */
  listOlderThan(prefix: string, before: Date, limit: number): Promise<string[]>;
}
