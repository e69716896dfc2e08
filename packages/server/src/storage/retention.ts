/** Retention sweeps over an object store (screenshots now; recordings and build logs later). */
import type { ObjectStore } from './object-store.ts';

/**
 * Deletes every object under `prefix` last modified before `before`, `batchSize` keys at a time, and returns how
 * many it deleted. Stops when a listing brings no key it has not already deleted, so a key that keeps coming
 * back (a store that lists what it cannot delete) ends the sweep instead of looping.
 */
export async function deleteObjectsOlderThan(store: ObjectStore, prefix: string, before: Date, batchSize = 500): Promise<number> {
  const deleted = new Set<string>();
  for (;;) {
    const keys = (await store.listOlderThan(prefix, before, batchSize)).filter((key) => !deleted.has(key));
    if (keys.length === 0) return deleted.size;
    for (const key of keys) {
      await store.delete(key);
      deleted.add(key);
    }
  }
}
