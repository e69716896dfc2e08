/**
 * The local artifact cache (storage/artifacts/local-cache.ts): least recently used copies evicted first until the
 * total is within the limit, never one in use; hit and miss counts per kind; the index on disk survives a reload
 * and is never left half-written.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { ArtifactCache, type ArtifactRef } from '../../src/storage/artifacts/index.ts';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-artifact-cache-test-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** A directory standing for a local copy, and the cache's index path in a fresh directory. */
function setUp(): { root: string; indexPath: string; copy(name: string): string } {
  const root = fs.mkdtempSync(path.join(scratch, 'cache-'));
  return {
    root,
    indexPath: path.join(root, 'index', 'artifact-cache.json'),
    copy: (name) => {
      const dir = path.join(root, 'copies', name);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'disk'), name);
      return dir;
    },
  };
}

const ref = (kind: ArtifactRef['kind'], id: string): ArtifactRef => ({ kind, id });
const names = (refs: ArtifactRef[]) => refs.map((r) => `${r.kind}/${r.id}`);

/** What evict's callbacks do: remove the directory for real; `busy` ids are in use. */
function evictor(busy: Set<string>, removed: string[]) {
  return {
    inUse: (r: ArtifactRef) => busy.has(r.id),
    remove: async (r: ArtifactRef, dir: string) => {
      removed.push(`${r.kind}/${r.id}`);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('artifact cache', () => {
  test('evicts least recently used first until within the limit, never a copy in use', async () => {
    const { indexPath, copy } = setUp();
    const cache = new ArtifactCache({ indexPath, limitBytes: 250 });
    cache.record(ref('template', 'python'), copy('python'), 100);
    cache.record(ref('snapshot', 'vm_1/s1'), copy('s1'), 100);
    cache.record(ref('pause', 'vm_2'), copy('vm_2'), 100);
    cache.record(ref('volume', 'vol_1'), copy('vol_1'), 100);
    cache.touch(ref('template', 'python')); // now the most recently used
    assert.deepEqual([cache.stats().usedBytes, cache.stats().entries], [400, 4]);

    // LRU order: s1, vm_2, vol_1, python. s1 is in use: vm_2 and vol_1 go (400 → 200).
    const removed: string[] = [];
    const first = await cache.evict(evictor(new Set(['vm_1/s1']), removed));
    assert.deepEqual(names(first.evicted), ['pause/vm_2', 'volume/vol_1']);
    assert.deepEqual(removed, ['pause/vm_2', 'volume/vol_1']);
    assert.equal(first.freedBytes, 200);
    assert.equal(cache.has(ref('pause', 'vm_2')), null);
    assert.ok(cache.has(ref('snapshot', 'vm_1/s1')), 'the copy in use stays');
    assert.deepEqual([cache.stats().usedBytes, cache.stats().entries], [200, 2]);

    // Within the limit: nothing to do.
    assert.deepEqual(await cache.evict(evictor(new Set(), removed)), { evicted: [], freedBytes: 0 });

    // Everything in use and over the limit: nothing is evicted (the total stays over it).
    cache.record(ref('image', 'base'), copy('base'), 300);
    const none = await cache.evict(evictor(new Set(['python', 'vm_1/s1', 'base']), removed));
    assert.deepEqual([none.evicted, cache.stats().usedBytes], [[], 500]);
    // Released: s1 (least recent) and python go, and base (most recent, 300 > 250) too.
    const all = await cache.evict(evictor(new Set(), removed));
    assert.deepEqual(names(all.evicted), ['snapshot/vm_1/s1', 'template/python', 'image/base']);
    assert.equal(cache.stats().usedBytes, 0);
  });

  test('the index survives a reload: entries, their order of use and the hit counts', async () => {
    const { indexPath, copy } = setUp();
    const cache = new ArtifactCache({ indexPath, limitBytes: 1000 });
    cache.record(ref('snapshot', 'a'), copy('a'), 400);
    cache.record(ref('snapshot', 'b'), copy('b'), 400);
    cache.record(ref('template', 'c'), copy('c'), 100);
    cache.touch(ref('snapshot', 'a'));
    cache.hit(ref('snapshot', 'a'));
    cache.hit(ref('snapshot', 'a'));
    cache.miss(ref('snapshot', 'b'));
    cache.miss(ref('template', 'c'));
    assert.deepEqual(
      fs.readdirSync(path.dirname(indexPath)).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary file left',
    );

    const reloaded = new ArtifactCache({ indexPath, limitBytes: 500 });
    assert.deepEqual(reloaded.stats(), {
      limitBytes: 500,
      usedBytes: 900,
      entries: 3,
      hits: { image: 0, template: 0, variant: 0, snapshot: 2, pause: 0, volume: 0 },
      misses: { image: 0, template: 1, variant: 0, snapshot: 1, pause: 0, volume: 0 },
    });
    assert.equal(reloaded.has(ref('snapshot', 'b')), path.join(path.dirname(path.dirname(indexPath)), 'copies', 'b'));
    // The order of use came back too: b (least recent) goes first, then c; a (touched last) stays.
    const removed: string[] = [];
    const result = await reloaded.evict(evictor(new Set(), removed));
    assert.deepEqual(names(result.evicted), ['snapshot/b']);
    // A use after the reload orders after every use before it.
    reloaded.record(ref('volume', 'd'), copy('d'), 100);
    reloaded.touch(ref('template', 'c'));
    const again = new ArtifactCache({ indexPath, limitBytes: 150 });
    assert.deepEqual(names((await again.evict(evictor(new Set(), removed))).evicted), ['snapshot/a', 'volume/d']);
  });

  test('has() drops a record whose directory is gone; forget drops one; a broken index starts empty', async () => {
    const { indexPath, copy } = setUp();
    const cache = new ArtifactCache({ indexPath, limitBytes: 1000 });
    const dir = copy('x');
    cache.record(ref('pause', 'x'), dir, 10);
    cache.record(ref('pause', 'y'), copy('y'), 20);
    assert.equal(cache.has(ref('pause', 'x')), dir);
    fs.rmSync(dir, { recursive: true });
    assert.equal(cache.has(ref('pause', 'x')), null);
    assert.equal(cache.stats().usedBytes, 20);
    cache.forget(ref('pause', 'y'));
    assert.equal(cache.has(ref('pause', 'y')), null);
    assert.deepEqual([cache.stats().entries, new ArtifactCache({ indexPath, limitBytes: 1 }).stats().entries], [0, 0]);

    fs.writeFileSync(indexPath, '{"version":1,"entries":[');
    const broken = new ArtifactCache({ indexPath, limitBytes: 1000 });
    assert.equal(broken.stats().entries, 0);
    broken.record(ref('volume', 'z'), copy('z'), 5);
    assert.equal(new ArtifactCache({ indexPath, limitBytes: 1000 }).stats().entries, 1, 'and writes a good one again');
  });

  test('a failing remove stops the eviction there and keeps what it had evicted', async () => {
    const { indexPath, copy } = setUp();
    const cache = new ArtifactCache({ indexPath, limitBytes: 0 });
    cache.record(ref('snapshot', 'one'), copy('one'), 1);
    cache.record(ref('snapshot', 'two'), copy('two'), 1);
    cache.record(ref('snapshot', 'three'), copy('three'), 1);
    const removed: string[] = [];
    await assert.rejects(
      cache.evict({
        inUse: () => false,
        remove: async (r) => {
          if (r.id === 'two') throw new Error('disk gone');
          removed.push(r.id);
        },
      }),
      /disk gone/,
    );
    assert.deepEqual(removed, ['one']);
    assert.deepEqual(new ArtifactCache({ indexPath, limitBytes: 0 }).stats().entries, 2, 'two and three are still recorded');
    // Evictions run one at a time: two at once evict each copy once.
    const order: string[] = [];
    const slow = { inUse: () => false, remove: async (r: ArtifactRef) => void order.push(r.id) };
    const [a, b] = await Promise.all([cache.evict(slow), cache.evict(slow)]);
    assert.deepEqual([names(a.evicted), names(b.evicted), order], [['snapshot/two', 'snapshot/three'], [], ['two', 'three']]);
  });
});
