/**
 * The artifact store (storage/artifacts/) against the local object store and a real S3-compatible server (s3rver
 * in a child process, `helpers/s3-server.ts`): sparse round trips with their holes kept, dedup counted in the
 * requests a real store receives, corruption and an object store stopped mid-way (nothing left at the target),
 * garbage collection, and usage by kind and user.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { ListedObject, ObjectStore, StoredObject } from '../../src/storage/index.ts';
import { ArtifactError, ArtifactStore, type ArtifactManifest, type ArtifactRef } from '../../src/storage/artifacts/index.ts';
import { LocalObjectStore } from '../../src/storage/local-object-store.ts';
import { S3ObjectStore } from '../../src/storage/s3-object-store.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';

const BUCKET = 'sandboxd-artifacts';
/** Small chunks keep the files small; the code paths are those of 4 MiB ones. */
const CHUNK = 64 * 1024;
const OWNER = { userId: 7, nodeId: 'node-a' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let s3: TestS3Server;
let s3Stores = 0;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-artifacts-test-'));

before(async () => {
  s3 = await startS3Server([BUCKET]);
});
after(async () => {
  await s3.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** A fresh directory under the test's scratch directory. */
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

function freshDir(name: string): string {
  return fs.mkdtempSync(path.join(scratch, `${name}-`));
}

/** An object store that counts the requests it passes on to a real one (the store underneath does the work). */
class CountingObjectStore implements ObjectStore {
  readonly counts = { put: 0, head: 0, get: 0, delete: 0 };
  constructor(readonly inner: ObjectStore) {}
  get description() {
    return this.inner.description;
  }
  put(key: string, body: Buffer, options: { contentType: string }) {
    if (key.startsWith('artifacts/chunks/')) this.counts.put++;
    return this.inner.put(key, body, options);
  }
  get(key: string) {
    this.counts.get++;
    return this.inner.get(key);
  }
  getStream(key: string): Promise<(StoredObject & { stream: Readable }) | null> {
    return this.inner.getStream(key);
  }
  head(key: string) {
    this.counts.head++;
    return this.inner.head(key);
  }
  list(prefix: string): AsyncIterable<ListedObject> {
    return this.inner.list(prefix);
  }
  delete(key: string) {
    this.counts.delete++;
    return this.inner.delete(key);
  }
  listOlderThan(prefix: string, before: Date, limit: number) {
    return this.inner.listOlderThan(prefix, before, limit);
  }
}

/**
 * Passes each request on to a real store once `gate` (when set) has settled: a test sets it to the stopping of the
 * real server, so the outage starts between two requests, whatever the timing of the machine.
 */
class GatedObjectStore extends CountingObjectStore {
  gate: Promise<unknown> | null = null;
  override async put(key: string, body: Buffer, options: { contentType: string }) {
    await this.gate;
    return super.put(key, body, options);
  }
  override async get(key: string) {
    await this.gate;
    return super.get(key);
  }
  override async head(key: string) {
    await this.gate;
    return super.head(key);
  }
}

interface Backend {
  name: string;
  /** A fresh, empty object store. */
  open(): ObjectStore;
}

const backends: Backend[] = [
  { name: 'local', open: () => new LocalObjectStore({ rootDir: path.join(freshDir('objects'), 'objects') }) },
  {
    name: 's3',
    open: () =>
      new S3ObjectStore({
        endpoint: s3.endpoint,
        region: 'us-east-1',
        bucket: BUCKET,
        prefix: `artifacts-${++s3Stores}-${randomBytes(3).toString('hex')}`,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
        forcePathStyle: true,
      }),
  },
];

/**
 * A sparse file of `layout` chunks: 'data' = random bytes, 'hole' = never written, 'zeros' = zeros written out
 * (blocks allocated, still an all-zero chunk); `tail` random bytes after them (a size not a multiple of the chunk).
 */
function makeSparseFile(file: string, layout: ('data' | 'hole' | 'zeros')[], tail: number): Buffer {
  const size = layout.length * CHUNK + tail;
  const expected = Buffer.alloc(size);
  const fd = fs.openSync(file, 'w', 0o640);
  try {
    fs.ftruncateSync(fd, size);
    layout.forEach((shape, index) => {
      if (shape === 'hole') return;
      const bytes = shape === 'data' ? randomBytes(CHUNK) : Buffer.alloc(CHUNK);
      bytes.copy(expected, index * CHUNK);
      fs.writeSync(fd, bytes, 0, CHUNK, index * CHUNK);
    });
    if (tail > 0) {
      const bytes = randomBytes(tail);
      bytes.copy(expected, layout.length * CHUNK);
      fs.writeSync(fd, bytes, 0, tail, layout.length * CHUNK);
    }
  } finally {
    fs.closeSync(fd);
  }
  return expected;
}

/** A file of `chunks` random chunks (and `tail` more bytes); returns its bytes. */
function makeDataFile(file: string, chunks: number, tail = 0): Buffer {
  const bytes = randomBytes(chunks * CHUNK + tail);
  fs.writeFileSync(file, bytes);
  return bytes;
}

/** Entries beside `target` whose names start with its own (the target itself, or partial directories). */
function leftovers(target: string): string[] {
  return fs.readdirSync(path.dirname(target)).filter((name) => name.startsWith(path.basename(target)));
}

async function rejectsWith(promise: Promise<unknown>, code: string, pattern: RegExp): Promise<ArtifactError> {
  let caught: unknown;
  await promise.then(
    () => assert.fail(`expected ${code}`),
    (error: unknown) => (caught = error),
  );
  assert.ok(caught instanceof ArtifactError, `an ArtifactError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  assert.match(caught.message, pattern);
  return caught;
}

for (const backend of backends) {
  describe(`artifact store: ${backend.name}`, () => {
    const open = (options: { concurrency?: number } = {}) => {
      const objects = backend.open();
      return { objects, artifacts: new ArtifactStore({ objects, chunkBytes: CHUNK, retryDelaysMs: [20, 50], ...options }) };
    };

    test('a sparse file round-trips byte-exact with its holes kept; modes, an empty file and nested names too', async () => {
      const { artifacts } = open();
      const source = freshDir('source');
      const memory = makeSparseFile(path.join(source, 'memory'), ['data', 'hole', 'zeros', 'data', 'hole'], 1000);
      fs.writeFileSync(path.join(source, 'state.json'), '{"devices":[]}');
      fs.chmodSync(path.join(source, 'state.json'), 0o755);
      fs.writeFileSync(path.join(source, 'empty'), '');
      const ref: ArtifactRef = { kind: 'snapshot', id: 'vm_round/trip-1' };
      const uploaded = await artifacts.upload(
        ref,
        [
          { name: 'memory', path: path.join(source, 'memory') },
          { name: 'meta/state.json', path: path.join(source, 'state.json') },
          { name: 'empty', path: path.join(source, 'empty') },
        ],
        { owner: OWNER, meta: { parent: 'snapshot/vm_round/base' } },
      );
      const memoryFile = uploaded.files.find((file) => file.name === 'memory')!;
      assert.deepEqual(
        memoryFile.chunks.map((chunk) => (chunk === null ? null : 'stored')),
        ['stored', null, null, 'stored', null, 'stored'],
        'the hole and the written zeros are both null chunks',
      );
      assert.equal(memoryFile.sha256, sha256(memory));
      assert.equal(memoryFile.size, 5 * CHUNK + 1000);
      assert.equal(uploaded.logicalBytes, memory.length + 14);
      assert.equal(uploaded.dataBytes, 2 * CHUNK + 1000 + 14);
      assert.equal(uploaded.uploadedBytes, uploaded.dataBytes);
      assert.deepEqual(uploaded.owner, OWNER);
      assert.deepEqual(uploaded.meta, { parent: 'snapshot/vm_round/base' });

      const target = path.join(freshDir('restore'), 'vm_round');
      const progress: number[] = [];
      const downloaded = await artifacts.download(ref, target, { onProgress: (done, total) => progress.push(done / total) });
      assert.equal(downloaded.downloadedBytes, uploaded.dataBytes);
      assert.equal(progress.at(-1), 1);
      const restored = fs.readFileSync(path.join(target, 'memory'));
      assert.ok(restored.equals(memory), 'byte-exact');
      const stats = fs.statSync(path.join(target, 'memory'));
      // Only the stored chunks take blocks (file system blocks of 4 KiB): the hole and the written zeros are holes now.
      assert.ok(stats.blocks * 512 <= 2 * CHUNK + 4096, `${stats.blocks * 512} bytes allocated for ${2 * CHUNK + 1000} bytes of data`);
      assert.equal(fs.readFileSync(path.join(target, 'meta', 'state.json'), 'utf8'), '{"devices":[]}');
      assert.equal(fs.statSync(path.join(target, 'meta', 'state.json')).mode & 0o777, 0o755);
      assert.equal(fs.statSync(path.join(target, 'memory')).mode & 0o777, 0o640);
      assert.equal(fs.statSync(path.join(target, 'empty')).size, 0);
      assert.deepEqual(leftovers(target), ['vm_round'], 'no partial directory beside it');

      assert.deepEqual(await artifacts.manifest(ref), (({ uploadedBytes: _u, reusedBytes: _r, ...manifest }) => manifest)(uploaded));
      assert.equal(await artifacts.exists(ref), true);
      await assert.rejects(artifacts.download(ref, target), /already exists/, 'an existing target is refused');
      assert.deepEqual(
        (await collect(artifacts.list('snapshot'))).map((manifest: ArtifactManifest) => manifest.id),
        ['vm_round/trip-1'],
      );
      assert.deepEqual(await collect(artifacts.list('pause')), []);
      assert.equal((await collect(artifacts.list())).length, 1);

      await artifacts.delete(ref);
      assert.equal(await artifacts.exists(ref), false);
      assert.equal(await artifacts.manifest(ref), null);
      const elsewhere = path.join(freshDir('restore'), 'gone');
      await rejectsWith(artifacts.download(ref, elsewhere), 'ARTIFACT_NOT_FOUND', /^downloading snapshot\/vm_round\/trip-1: there is no artifact/);
      assert.deepEqual(leftovers(elsewhere), []);
    });

    test('dedup: a second artifact sharing most chunks sends only the changed ones; repeats are not even asked about', async () => {
      const objects = new CountingObjectStore(backend.open());
      const first = new ArtifactStore({ objects, chunkBytes: CHUNK });
      const source = freshDir('dedup');
      const bytes = makeDataFile(path.join(source, 'disk'), 8, 500);
      const a = await first.upload({ kind: 'snapshot', id: 'vm_d/1' }, [{ name: 'disk', path: path.join(source, 'disk') }], { owner: OWNER });
      assert.deepEqual([a.uploadedBytes, a.reusedBytes, objects.counts.put], [8 * CHUNK + 500, 0, 9]);

      // The same file again through the same store: every chunk is known in this process, the store is not asked.
      const before = { ...objects.counts };
      const again = await first.upload({ kind: 'snapshot', id: 'vm_d/1-again' }, [{ name: 'disk', path: path.join(source, 'disk') }], { owner: OWNER });
      assert.deepEqual([again.uploadedBytes, again.reusedBytes], [0, 8 * CHUNK + 500]);
      assert.deepEqual([objects.counts.put - before.put, objects.counts.head - before.head], [0, 0]);

      // One chunk changed, uploaded by another node (a new store instance knows nothing yet: it asks, and sends one chunk).
      bytes[3 * CHUNK + 17] = bytes[3 * CHUNK + 17]! ^ 0xff;
      fs.writeFileSync(path.join(source, 'disk-2'), bytes);
      const second = new ArtifactStore({ objects, chunkBytes: CHUNK });
      const countsBefore = { ...objects.counts };
      const b = await second.upload({ kind: 'snapshot', id: 'vm_d/2' }, [{ name: 'disk', path: path.join(source, 'disk-2') }], { owner: OWNER });
      assert.deepEqual([b.uploadedBytes, b.reusedBytes], [CHUNK, 7 * CHUNK + 500]);
      assert.equal(objects.counts.put - countsBefore.put, 1, 'one chunk PUT');
      assert.equal(objects.counts.head - countsBefore.head, 9, 'one HEAD per chunk');
      assert.deepEqual(
        b.files[0]!.chunks.map((chunk, index) => chunk === a.files[0]!.chunks[index]),
        [true, true, true, false, true, true, true, true, true],
      );

      // Two equal chunks in one file are sent once.
      const twice = randomBytes(CHUNK);
      fs.writeFileSync(path.join(source, 'twice'), Buffer.concat([twice, twice]));
      const c = await second.upload({ kind: 'volume', id: 'vol_twice' }, [{ name: 'data', path: path.join(source, 'twice') }], { owner: OWNER });
      assert.deepEqual([c.uploadedBytes, c.reusedBytes], [CHUNK, CHUNK]);

      const target = path.join(freshDir('dedup-restore'), 'vm_d');
      await second.download({ kind: 'snapshot', id: 'vm_d/2' }, target);
      assert.ok(fs.readFileSync(path.join(target, 'disk')).equals(bytes));
    });

    test('a corrupted or missing chunk, or a file that does not match its checksum, is ARTIFACT_CORRUPT and leaves nothing at the target', async () => {
      const { objects, artifacts } = open();
      const source = freshDir('corrupt');
      makeDataFile(path.join(source, 'memory'), 4, 10);
      const ref: ArtifactRef = { kind: 'pause', id: 'vm_bad' };
      const manifest = await artifacts.upload(ref, [{ name: 'memory', path: path.join(source, 'memory') }], { owner: OWNER });
      const chunks = manifest.files[0]!.chunks as string[];
      const chunkKey = (hash: string) => `artifacts/chunks/${hash.slice(0, 2)}/${hash}`;

      // Overwrite chunk 2's object with other bytes of the same length.
      await objects.put(chunkKey(chunks[2]!), randomBytes(CHUNK), { contentType: 'application/octet-stream' });
      const parent = freshDir('corrupt-restore');
      const target = path.join(parent, 'vm_bad');
      await rejectsWith(
        artifacts.download(ref, target),
        'ARTIFACT_CORRUPT',
        new RegExp(`^downloading pause/vm_bad: file memory chunk 2 \\(${chunks[2]}\\) does not match its checksum .*the artifact pause/vm_bad is damaged`),
      );
      assert.deepEqual(fs.readdirSync(parent), [], 'neither the target nor a partial directory');

      await objects.delete(chunkKey(chunks[1]!));
      await rejectsWith(artifacts.download(ref, target), 'ARTIFACT_CORRUPT', /file memory chunk 1 \([0-9a-f]{64}\) is missing from the object store/);
      assert.deepEqual(fs.readdirSync(parent), []);

      // A manifest whose file checksum is wrong (every chunk right): caught at the end of the file.
      makeDataFile(path.join(source, 'other'), 2);
      const good = await artifacts.upload({ kind: 'pause', id: 'vm_sum' }, [{ name: 'memory', path: path.join(source, 'other') }], { owner: OWNER });
      const tampered = { ...good, uploadedBytes: undefined, reusedBytes: undefined, files: [{ ...good.files[0]!, sha256: 'ab'.repeat(32) }] };
      await objects.put('artifacts/manifests/pause/vm_sum.json', Buffer.from(JSON.stringify(tampered)), { contentType: 'application/json' });
      await rejectsWith(artifacts.download({ kind: 'pause', id: 'vm_sum' }, target), 'ARTIFACT_CORRUPT', /file memory does not match its checksum/);
      assert.deepEqual(fs.readdirSync(parent), []);

      // A chunk deleted behind the store's back is sent again once the memory of it has expired (here at once).
      const forgetful = new ArtifactStore({ objects, chunkBytes: CHUNK, knownChunksTtlMs: 0 });
      makeDataFile(path.join(source, 'third'), 3);
      const third = await forgetful.upload({ kind: 'pause', id: 'vm_3' }, [{ name: 'memory', path: path.join(source, 'third') }], { owner: OWNER });
      await objects.delete(chunkKey(third.files[0]!.chunks[0]!));
      const fourth = await forgetful.upload({ kind: 'pause', id: 'vm_4' }, [{ name: 'memory', path: path.join(source, 'third') }], { owner: OWNER });
      assert.deepEqual([fourth.uploadedBytes, fourth.reusedBytes], [CHUNK, 2 * CHUNK]);
      await forgetful.download({ kind: 'pause', id: 'vm_4' }, path.join(parent, 'vm_4'));
      fs.rmSync(path.join(parent, 'vm_4'), { recursive: true });

      // A manifest that is not one.
      await objects.put('artifacts/manifests/pause/vm_sum.json', Buffer.from('{"version":1'), { contentType: 'application/json' });
      await rejectsWith(artifacts.manifest({ kind: 'pause', id: 'vm_sum' }), 'ARTIFACT_CORRUPT', /the manifest of pause\/vm_sum is unreadable: it is not JSON/);
    });

    test('garbage collection deletes the chunks no manifest names once older than the grace period, and none that one does', async () => {
      const { artifacts } = open();
      const source = freshDir('gc');
      const shared = makeDataFile(path.join(source, 'shared'), 2);
      const keepOwn = randomBytes(2 * CHUNK);
      const goneOwn = randomBytes(3 * CHUNK);
      fs.writeFileSync(path.join(source, 'keep'), Buffer.concat([shared, keepOwn]));
      fs.writeFileSync(path.join(source, 'gone'), Buffer.concat([shared, goneOwn]));
      const keep: ArtifactRef = { kind: 'snapshot', id: 'vm_gc/keep' };
      const gone: ArtifactRef = { kind: 'snapshot', id: 'vm_gc/gone' };
      await artifacts.upload(keep, [{ name: 'disk', path: path.join(source, 'keep') }], { owner: OWNER });
      await artifacts.upload(gone, [{ name: 'disk', path: path.join(source, 'gone') }], { owner: OWNER });
      await artifacts.delete(gone);

      assert.deepEqual(await artifacts.collectGarbage({ graceMs: 3_600_000 }), { chunks: 7, referenced: 4, deleted: 0, freedBytes: 0, keptYoung: 3 });
      // S3 keeps last-modified times in whole seconds.
      await sleep(1100);
      assert.deepEqual(await artifacts.collectGarbage({ graceMs: 0, dryRun: true }), {
        chunks: 7,
        referenced: 4,
        deleted: 3,
        freedBytes: 3 * CHUNK,
        keptYoung: 0,
      });
      assert.equal((await artifacts.usage()).chunks.count, 7, 'a dry run deletes nothing');
      assert.deepEqual(await artifacts.collectGarbage({ graceMs: 0 }), { chunks: 7, referenced: 4, deleted: 3, freedBytes: 3 * CHUNK, keptYoung: 0 });
      assert.deepEqual((await artifacts.usage()).chunks, { count: 4, bytes: 4 * CHUNK });

      const target = path.join(freshDir('gc-restore'), 'keep');
      await artifacts.download(keep, target);
      assert.ok(fs.readFileSync(path.join(target, 'disk')).equals(Buffer.concat([shared, keepOwn])), 'what a manifest names is intact');
      // The collection made this process forget the chunks it deleted: uploading them again sends them again.
      const again = await artifacts.upload(gone, [{ name: 'disk', path: path.join(source, 'gone') }], { owner: OWNER });
      assert.deepEqual([again.uploadedBytes, again.reusedBytes], [3 * CHUNK, 2 * CHUNK]);
      assert.deepEqual(await artifacts.collectGarbage({ graceMs: 0 }), { chunks: 7, referenced: 7, deleted: 0, freedBytes: 0, keptYoung: 0 });
    });

    test('usage counts artifacts and bytes per kind and per user, and the chunks stored', async () => {
      const { artifacts } = open();
      const source = freshDir('usage');
      makeSparseFile(path.join(source, 'a'), ['data', 'hole', 'data'], 0);
      makeSparseFile(path.join(source, 'b'), ['hole', 'data'], 100);
      makeDataFile(path.join(source, 'c'), 1);
      makeDataFile(path.join(source, 't'), 2);
      await artifacts.upload({ kind: 'snapshot', id: 'vm_1/s1' }, [{ name: 'm', path: path.join(source, 'a') }], { owner: { userId: 1, nodeId: 'n' } });
      await artifacts.upload({ kind: 'pause', id: 'vm_1' }, [{ name: 'm', path: path.join(source, 'b') }], { owner: { userId: 1, nodeId: 'n' } });
      await artifacts.upload({ kind: 'snapshot', id: 'vm_2/s1' }, [{ name: 'm', path: path.join(source, 'c') }], { owner: { userId: 2, nodeId: 'n' } });
      await artifacts.upload({ kind: 'template', id: 'python' }, [{ name: 'disk', path: path.join(source, 't') }], { owner: { userId: null, nodeId: 'n' } });

      const usage = await artifacts.usage();
      assert.deepEqual(usage.byKind, {
        image: { artifacts: 0, logicalBytes: 0, dataBytes: 0 },
        template: { artifacts: 1, logicalBytes: 2 * CHUNK, dataBytes: 2 * CHUNK },
        variant: { artifacts: 0, logicalBytes: 0, dataBytes: 0 },
        snapshot: { artifacts: 2, logicalBytes: 4 * CHUNK, dataBytes: 3 * CHUNK },
        pause: { artifacts: 1, logicalBytes: 2 * CHUNK + 100, dataBytes: CHUNK + 100 },
        volume: { artifacts: 0, logicalBytes: 0, dataBytes: 0 },
      });
      assert.deepEqual(
        [...usage.byUser.entries()].sort(([a], [b]) => a - b),
        [
          [1, { artifacts: 2, logicalBytes: 5 * CHUNK + 100, dataBytes: 3 * CHUNK + 100 }],
          [2, { artifacts: 1, logicalBytes: CHUNK, dataBytes: CHUNK }],
        ],
      );
      assert.deepEqual(usage.chunks, { count: 7, bytes: 6 * CHUNK + 100 });
    });

    test('an aborted download or upload stops, leaves nothing at the target and writes no manifest', async () => {
      const { artifacts } = open();
      const source = freshDir('abort');
      makeDataFile(path.join(source, 'memory'), 16);
      const ref: ArtifactRef = { kind: 'snapshot', id: 'vm_abort' };
      await artifacts.upload(ref, [{ name: 'memory', path: path.join(source, 'memory') }], { owner: OWNER });
      const parent = freshDir('abort-restore');
      const downloading = new AbortController();
      await assert.rejects(artifacts.download(ref, path.join(parent, 'vm_abort'), { signal: downloading.signal, onProgress: () => downloading.abort() }), {
        name: 'AbortError',
      });
      assert.deepEqual(fs.readdirSync(parent), []);
      const uploading = new AbortController();
      const other: ArtifactRef = { kind: 'snapshot', id: 'vm_abort-2' };
      makeDataFile(path.join(source, 'other'), 16);
      await assert.rejects(
        artifacts.upload(other, [{ name: 'memory', path: path.join(source, 'other') }], {
          owner: OWNER,
          signal: uploading.signal,
          onProgress: () => uploading.abort(),
        }),
        { name: 'AbortError' },
      );
      assert.equal(await artifacts.exists(other), false);
    });

    test('bad references and file names are refused before anything is stored', async () => {
      const { artifacts } = open();
      const file = path.join(freshDir('bad'), 'f');
      fs.writeFileSync(file, 'x');
      for (const id of ['', '../x', 'a//b', 'a/./b', 'a b', 'x'.repeat(201), 'é']) {
        await assert.rejects(artifacts.upload({ kind: 'snapshot', id }, [{ name: 'f', path: file }], { owner: OWNER }), /bad artifact id/, JSON.stringify(id));
      }
      await assert.rejects(artifacts.manifest({ kind: 'nope' as 'image', id: 'x' }), /bad artifact kind/);
      for (const names of [['../f'], ['f', 'f'], ['d', 'd/f']]) {
        await assert.rejects(
          artifacts.upload(
            { kind: 'volume', id: 'v' },
            names.map((name) => ({ name, path: file })),
            { owner: OWNER },
          ),
          /bad artifact file name|listed twice|cannot also be the directory/,
          JSON.stringify(names),
        );
      }
      assert.equal((await artifacts.usage()).chunks.count, 0);
    });
  });
}

describe('artifact store: the object store stops answering', () => {
  const OUTAGE_BUCKET = 'sandboxd-outage';
  const storeOn = (server: { endpoint: string }, prefix = 'x') =>
    new S3ObjectStore({
      endpoint: server.endpoint,
      region: 'us-east-1',
      bucket: OUTAGE_BUCKET,
      prefix,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      connectionTimeoutMs: 1000,
    });

  test('stopped mid-download: OBJECT_STORE_UNAVAILABLE naming the store and the artifact, and nothing at the target', async () => {
    const server = await startS3Server([OUTAGE_BUCKET]);
    let stopped: Promise<void> | null = null;
    const s3Objects = storeOn(server);
    try {
      const objects = new GatedObjectStore(s3Objects);
      const artifacts = new ArtifactStore({ objects, chunkBytes: CHUNK, concurrency: 2, retryDelaysMs: [20, 50] });
      const source = freshDir('outage');
      makeDataFile(path.join(source, 'memory'), 12);
      await artifacts.upload({ kind: 'snapshot', id: 'vm_outage' }, [{ name: 'memory', path: path.join(source, 'memory') }], { owner: OWNER });
      const parent = freshDir('outage-restore');
      const target = path.join(parent, 'vm_outage');
      const endpoint = server.endpoint.replace(/[.]/g, '\\.');
      await rejectsWith(
        artifacts.download({ kind: 'snapshot', id: 'vm_outage' }, target, {
          onProgress: () => {
            stopped ??= server.stop();
            objects.gate = stopped;
          },
        }),
        'OBJECT_STORE_UNAVAILABLE',
        new RegExp(`^downloading snapshot/vm_outage: the object store s3://${OUTAGE_BUCKET}/x/ at ${endpoint} did not answer \\(connect ECONNREFUSED\\)$`),
      );
      assert.ok(stopped, 'the server was stopped during the download');
      assert.ok(objects.counts.get >= 2, 'some chunks came before the outage');
      assert.deepEqual(fs.readdirSync(parent), [], 'neither the target nor a partial directory');
    } finally {
      s3Objects.destroy();
      await (stopped ?? server.stop());
    }
  });

  test('stopped mid-upload: OBJECT_STORE_UNAVAILABLE, and no manifest was written', async () => {
    const server = await startS3Server([OUTAGE_BUCKET]);
    let stopped: Promise<void> | null = null;
    const s3Objects = storeOn(server);
    const puts: string[] = [];
    try {
      const objects = new GatedObjectStore(s3Objects);
      const put = objects.put.bind(objects);
      objects.put = (key, body, options) => {
        puts.push(key);
        return put(key, body, options);
      };
      const artifacts = new ArtifactStore({ objects, chunkBytes: CHUNK, concurrency: 2, retryDelaysMs: [20, 50] });
      const source = freshDir('outage-up');
      makeDataFile(path.join(source, 'memory'), 12);
      await rejectsWith(
        artifacts.upload({ kind: 'pause', id: 'vm_x' }, [{ name: 'memory', path: path.join(source, 'memory') }], {
          owner: OWNER,
          onProgress: () => {
            stopped ??= server.stop();
            objects.gate = stopped;
          },
        }),
        'OBJECT_STORE_UNAVAILABLE',
        /^uploading pause\/vm_x: the object store s3:\/\/sandboxd-outage\/x\/ at http:\/\/127\.0\.0\.1:\d+ did not answer \(connect ECONNREFUSED\)$/,
      );
      assert.ok(puts.length >= 1, 'a chunk was stored before the outage');
      assert.ok(!puts.some((key) => key.startsWith('artifacts/manifests/')), 'the manifest (written last) was never sent');
    } finally {
      s3Objects.destroy();
      await (stopped ?? server.stop());
    }
  });

  test('a store that refuses (a missing bucket) is OBJECT_STORE_UNAVAILABLE at once, saying what it answered', async () => {
    const objects = new S3ObjectStore({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: 'no-such-bucket',
      prefix: '',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
    });
    const artifacts = new ArtifactStore({ objects, chunkBytes: CHUNK, retryDelaysMs: [5_000, 5_000] });
    const file = path.join(freshDir('refused'), 'f');
    makeDataFile(file, 1);
    const started = Date.now();
    await rejectsWith(
      artifacts.upload({ kind: 'volume', id: 'vol_1' }, [{ name: 'data', path: file }], { owner: OWNER }),
      'OBJECT_STORE_UNAVAILABLE',
      /^uploading volume\/vol_1: the object store s3:\/\/no-such-bucket\/ at http:\/\/127\.0\.0\.1:\d+ refused the request \(HTTP 404 NoSuchBucket: /,
    );
    assert.ok(Date.now() - started < 5_000, 'a refusal is not retried');
    objects.destroy();
  });

  test('a store that was never there fails at once with the same error', async () => {
    const objects = storeOn({ endpoint: 'http://127.0.0.1:1' });
    const artifacts = new ArtifactStore({ objects, chunkBytes: CHUNK, retryDelaysMs: [20, 50] });
    const file = path.join(freshDir('nowhere'), 'f');
    makeDataFile(file, 1);
    await rejectsWith(
      artifacts.upload({ kind: 'volume', id: 'vol_1' }, [{ name: 'data', path: file }], { owner: OWNER }),
      'OBJECT_STORE_UNAVAILABLE',
      /^uploading volume\/vol_1: the object store s3:\/\/sandboxd-outage\/x\/ at http:\/\/127\.0\.0\.1:1 did not answer \(connect ECONNREFUSED\)$/,
    );
    await rejectsWith(artifacts.exists({ kind: 'volume', id: 'vol_1' }), 'OBJECT_STORE_UNAVAILABLE', /^looking for volume\/vol_1: .* did not answer/);
    objects.destroy();
  });
});
