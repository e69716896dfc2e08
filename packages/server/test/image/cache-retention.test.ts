/**
 * Retention of the machine-wide caches: what no engine marked in use for the retention period goes; the
 * image and snapshot set in use, recent ones, one being built, and anything not shaped like an entry stay.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pruneSnapshotSets } from '../../src/engine/snapshot-variants.ts';
import { layerDir, layerLockPath } from '../../src/image/cache-layout.ts';
import { acquireFileLock } from '../../src/image/file-lock.ts';
import { markInUse, pruneGuestImages, unusedEntries, type GuestImage } from '../../src/image/index.ts';

const DAY_MS = 86_400_000;

function makeDir(dir: string, ageDays: number): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'rootfs.ext4'), 'bytes');
  const when = new Date(Date.now() - ageDays * DAY_MS);
  fs.utimesSync(dir, when, when);
  return dir;
}

function imageAt(cacheDir: string, hash: string): GuestImage {
  const dir = layerDir(cacheDir, 'guest', hash);
  return { hash, dir, kernelPath: '', initrdPath: '', rootfsPath: '', manifestPath: '', kernelVersion: '' } as GuestImage;
}

describe('cache retention', () => {
  let root: string;
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-retention-'));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  test('marking sets an entry to now; entries older than the limit are listed, except the kept ones and files', async () => {
    const parent = path.join(root, 'entries');
    const old = makeDir(path.join(parent, 'old'), 10);
    const kept = makeDir(path.join(parent, 'kept'), 10);
    makeDir(path.join(parent, 'recent'), 1);
    fs.writeFileSync(path.join(parent, 'a-file'), '');
    fs.utimesSync(path.join(parent, 'a-file'), new Date(0), new Date(0));
    assert.deepEqual(await unusedEntries(parent, [kept], 7 * DAY_MS), [old]);
    await markInUse([old, path.join(parent, 'missing')]);
    assert.ok(Date.now() - fs.statSync(old).mtimeMs < 60_000);
    assert.deepEqual(await unusedEntries(parent, [kept], 7 * DAY_MS), []);
    assert.deepEqual(await unusedEntries(path.join(root, 'no-such-dir'), [], 0), []);
  });

  test('old guest images go with their lock files; the one in use, recent ones and one being built stay', async () => {
    const cacheDir = path.join(root, 'cache');
    const inUse = imageAt(cacheDir, 'aaaaaaaaaaaaaaaa');
    makeDir(inUse.dir, 30);
    const old = makeDir(layerDir(cacheDir, 'guest', 'bbbbbbbbbbbbbbbb'), 30);
    const recent = makeDir(layerDir(cacheDir, 'guest', 'cccccccccccccccc'), 2);
    const building = makeDir(layerDir(cacheDir, 'guest', 'dddddddddddddddd'), 30);
    fs.mkdirSync(path.dirname(layerLockPath(cacheDir, 'guest', 'x')), { recursive: true });
    fs.writeFileSync(layerLockPath(cacheDir, 'guest', 'bbbbbbbbbbbbbbbb'), '');
    const lock = await acquireFileLock(layerLockPath(cacheDir, 'guest', 'dddddddddddddddd'));
    try {
      assert.deepEqual(await pruneGuestImages(inUse, 7 * DAY_MS), [old]);
    } finally {
      await lock.release();
    }
    assert.equal(fs.existsSync(old), false);
    assert.equal(fs.existsSync(layerLockPath(cacheDir, 'guest', 'bbbbbbbbbbbbbbbb')), false);
    for (const dir of [inUse.dir, recent, building]) assert.ok(fs.existsSync(dir), dir);
    // An image outside the cache's layout has no siblings to prune.
    assert.deepEqual(await pruneGuestImages({ ...inUse, hash: 'other' }, 0), []);
    assert.ok(fs.existsSync(building));
  });

  test('old snapshot sets go; the set in use, recent sets and directories not named like a set stay', async () => {
    const snapshots = path.join(root, 'snapshots');
    const inUse = makeDir(path.join(snapshots, '1111111111111111-tcg-f2-abcdef012345'), 30);
    const old = makeDir(path.join(snapshots, '2222222222222222-tcg-f2-abcdef012345'), 30);
    const olderFormat = makeDir(path.join(snapshots, '3333333333333333-kvm-f2'), 30);
    const recent = makeDir(path.join(snapshots, '4444444444444444-tcg-f2-abcdef012345'), 1);
    const stranger = makeDir(path.join(snapshots, 'my-notes'), 30);
    assert.deepEqual((await pruneSnapshotSets(snapshots, inUse, 7 * DAY_MS)).sort(), [old, olderFormat].sort());
    for (const dir of [inUse, recent, stranger]) assert.ok(fs.existsSync(dir), dir);
  });
});
