/**
 * The object store: one behaviour suite run against the local store (a temporary directory) and the S3 store
 * talking to a real S3-compatible server (s3rver in a child process on 127.0.0.1, `helpers/s3-server.ts`), both
 * built by `createObjectStore` from configuration as the server builds them; then what is particular to each,
 * and the configuration's errors.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { createObjectStore, deleteObjectsOlderThan, type ObjectStore } from '../../src/storage/index.ts';
import { LocalObjectStore } from '../../src/storage/local-object-store.ts';
import { S3ObjectStore } from '../../src/storage/s3-object-store.ts';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.ts';

const BUCKET = 'sandboxd-test';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every byte value, then random bytes: a store that treats the body as text or trims it fails the round trip. */
function binaryBody(size: number): Buffer {
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  return Buffer.concat([all, randomBytes(Math.max(0, size - all.length))]);
}

const BAD_KEYS = [
  '',
  '/a',
  'a/',
  'a//b',
  '..',
  '../x',
  'a/../b',
  '.',
  './a',
  'a/./b',
  'a b',
  'a\\b',
  'a?b',
  'é.png',
  'a\0b',
  'x'.repeat(513),
  `${'x'.repeat(256)}/a`,
];

interface Backend {
  name: string;
  /** A fresh, empty store, and what removes it. */
  open(): Promise<{ store: ObjectStore; close(): Promise<void> }>;
}

let s3: TestS3Server;
// Each S3 store gets a prefix of its own in the one bucket, so the suites do not see each other's keys.
let s3Stores = 0;

const backends: Backend[] = [
  {
    name: 'local',
    open: async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-objects-'));
      const store = createObjectStore(loadConfig({ SANDBOXD_DATA_DIR: dataDir }).objects);
      return { store, close: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
    },
  },
  {
    name: 's3',
    open: async () => {
      const config = loadConfig({
        SANDBOXD_OBJECT_STORE: 's3',
        SANDBOXD_S3_ENDPOINT: s3.endpoint,
        SANDBOXD_S3_BUCKET: BUCKET,
        SANDBOXD_S3_PREFIX: `suite-${++s3Stores}/${randomBytes(4).toString('hex')}`,
        SANDBOXD_S3_ACCESS_KEY_ID: s3.accessKeyId,
        SANDBOXD_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      });
      const store = createObjectStore(config.objects);
      assert.ok(store instanceof S3ObjectStore);
      return { store, close: async () => store.destroy() };
    },
  },
];

before(async () => {
  s3 = await startS3Server([BUCKET]);
});
after(async () => {
  await s3.stop();
});

for (const backend of backends) {
  describe(`object store behaviour: ${backend.name}`, () => {
    let store: ObjectStore;
    let close: () => Promise<void>;
    before(async () => {
      ({ store, close } = await backend.open());
    });
    after(async () => close());

    test('put then get returns the same bytes, content type, size and a current last-modified time', async () => {
      const body = binaryBody(256 * 1024);
      const started = Date.now();
      await store.put('screenshots/ses_1/1.png', body, { contentType: 'image/png' });
      const got = await store.get('screenshots/ses_1/1.png');
      assert.ok(got, 'the object is there');
      assert.ok(got.body.equals(body), 'byte-exact');
      assert.equal(got.contentType, 'image/png');
      assert.equal(got.size, body.length);
      // S3 keeps whole seconds.
      assert.ok(
        got.lastModified.getTime() >= started - 1000 && got.lastModified.getTime() <= Date.now() + 1000,
        `lastModified ${got.lastModified.toISOString()}`,
      );
    });

    test('an empty object and the longest key (512 characters) round-trip', async () => {
      const longKey = `${'a'.repeat(255)}/${'b'.repeat(254)}/c`;
      assert.equal(longKey.length, 512);
      await store.put(longKey, Buffer.alloc(0), { contentType: 'text/plain; charset=utf-8' });
      const got = await store.get(longKey);
      assert.deepEqual([got?.body.length, got?.size, got?.contentType], [0, 0, 'text/plain; charset=utf-8']);
    });

    test('a put replaces the object whole, content type included', async () => {
      await store.put('overwrite/x', binaryBody(10_000), { contentType: 'image/png' });
      const second = Buffer.from('second, shorter');
      await store.put('overwrite/x', second, { contentType: 'image/jpeg' });
      const got = await store.get('overwrite/x');
      assert.ok(got?.body.equals(second), 'the new bytes, none of the old ones left after them');
      assert.deepEqual([got?.contentType, got?.size], ['image/jpeg', second.length]);
    });

    test('a missing key is null from get and getStream', async () => {
      assert.equal(await store.get('missing/nothing.png'), null);
      assert.equal(await store.getStream('missing/nothing.png'), null);
      await store.put('missing/parent.png', Buffer.from('x'), { contentType: 'image/png' });
      assert.equal(await store.get('missing'), null, 'a prefix of a key is not an object');
    });

    test('delete removes the object, and deleting a missing key is not an error', async () => {
      await store.put('delete/me.png', Buffer.from('bytes'), { contentType: 'image/png' });
      await store.delete('delete/me.png');
      assert.equal(await store.get('delete/me.png'), null);
      await store.delete('delete/me.png');
      await store.delete('delete/never-was.png');
      await store.delete('no/such/prefix/at/all');
      await store.put('delete/me.png', Buffer.from('again'), { contentType: 'image/png' });
      assert.equal((await store.get('delete/me.png'))?.body.toString(), 'again', 'the key can be used again');
    });

    test('getStream streams a large object whole, with its content type and size', async () => {
      const body = binaryBody(3 * 1024 * 1024 + 17);
      await store.put('recordings/big.webm', body, { contentType: 'video/webm' });
      const got = await store.getStream('recordings/big.webm');
      assert.ok(got);
      assert.deepEqual([got.contentType, got.size], ['video/webm', body.length]);
      assert.ok((await readAll(got.stream)).equals(body), 'byte-exact');
    });

    test('listOlderThan returns the keys under a prefix last modified before the given time, at most limit', async () => {
      await store.put('list/s1/old-a.png', Buffer.from('a'), { contentType: 'image/png' });
      await store.put('list/s1/old-b.png', Buffer.from('b'), { contentType: 'image/png' });
      await store.put('list/s2/old-c.png', Buffer.from('c'), { contentType: 'image/png' });
      await store.put('listing-elsewhere/old-d.png', Buffer.from('d'), { contentType: 'image/png' });
      // S3 keeps last-modified times in whole seconds: leave more than a second on each side of the cut.
      await sleep(1100);
      const cut = new Date();
      await sleep(1100);
      await store.put('list/s1/new-e.png', Buffer.from('e'), { contentType: 'image/png' });
      const future = new Date(Date.now() + 86_400_000);
      const past = new Date(Date.now() - 86_400_000);

      const sorted = async (prefix: string, when: Date, limit = 100) => (await store.listOlderThan(prefix, when, limit)).sort();
      assert.deepEqual(await sorted('list/', cut), ['list/s1/old-a.png', 'list/s1/old-b.png', 'list/s2/old-c.png']);
      assert.deepEqual(await sorted('list/', future), ['list/s1/new-e.png', 'list/s1/old-a.png', 'list/s1/old-b.png', 'list/s2/old-c.png']);
      assert.deepEqual(await sorted('list/s1/', cut), ['list/s1/old-a.png', 'list/s1/old-b.png']);
      assert.deepEqual(await sorted('list/s1/old-b', future), ['list/s1/old-b.png'], 'a prefix matches as text, inside a name too');
      assert.deepEqual(await sorted('list', cut), ['list/s1/old-a.png', 'list/s1/old-b.png', 'list/s2/old-c.png', 'listing-elsewhere/old-d.png']);
      assert.deepEqual(await sorted('list/', past), []);
      assert.deepEqual(await sorted('nothing-here/', future), []);
      const limited = await store.listOlderThan('list/', future, 2);
      assert.equal(limited.length, 2);
      assert.ok(limited.every((key) => key.startsWith('list/')));
      assert.deepEqual(await store.listOlderThan('list/', future, 0), []);
      assert.ok((await sorted('', future)).includes('listing-elsewhere/old-d.png'), 'the empty prefix lists everything');
    });

    test('deleteObjectsOlderThan sweeps what is older and keeps the rest', async () => {
      for (let i = 0; i < 7; i++) await store.put(`sweep/old/${i}.png`, Buffer.from([i]), { contentType: 'image/png' });
      await store.put('sweep-not/keep.png', Buffer.from('k'), { contentType: 'image/png' });
      await sleep(1100);
      const cut = new Date();
      await sleep(1100);
      await store.put('sweep/new.png', Buffer.from('n'), { contentType: 'image/png' });
      assert.equal(await deleteObjectsOlderThan(store, 'sweep/', cut, 3), 7);
      assert.deepEqual(await store.listOlderThan('sweep', new Date(Date.now() + 60_000), 100).then((keys) => keys.sort()), [
        'sweep-not/keep.png',
        'sweep/new.png',
      ]);
    });

    test('head gives the size and last-modified time without the bytes, and null for a missing key or a prefix', async () => {
      const body = binaryBody(70_000);
      const started = Date.now();
      await store.put('head/a/one.bin', body, { contentType: 'application/octet-stream' });
      const head = await store.head('head/a/one.bin');
      assert.equal(head?.size, body.length);
      assert.ok(head.lastModified.getTime() >= started - 1000 && head.lastModified.getTime() <= Date.now() + 1000, head.lastModified.toISOString());
      assert.equal(await store.head('head/a/missing.bin'), null);
      assert.equal(await store.head('head/a'), null, 'a prefix of a key is not an object');
      assert.equal(await store.head('head/a/one.bin/below'), null);
      await store.delete('head/a/one.bin');
      assert.equal(await store.head('head/a/one.bin'), null);
    });

    test('list yields every object under a prefix once, with its size and last-modified time', async () => {
      const keys = ['walk/a/1', 'walk/a-b', 'walk/a.c', 'walk/a/2/deep', 'walk/b', 'walk/ab/3', 'walking/x'];
      for (const [index, key] of keys.entries()) await store.put(key, Buffer.alloc(index + 1), { contentType: 'application/octet-stream' });
      const listed = async (prefix: string) => {
        const found: { key: string; size: number }[] = [];
        for await (const object of store.list(prefix)) {
          assert.ok(object.lastModified instanceof Date && object.lastModified.getTime() > Date.now() - 60_000);
          found.push({ key: object.key, size: object.size });
        }
        return found.sort((a, b) => (a.key < b.key ? -1 : 1));
      };
      assert.deepEqual(await listed('walk/'), [
        { key: 'walk/a-b', size: 2 },
        { key: 'walk/a.c', size: 3 },
        { key: 'walk/a/1', size: 1 },
        { key: 'walk/a/2/deep', size: 4 },
        { key: 'walk/ab/3', size: 6 },
        { key: 'walk/b', size: 5 },
      ]);
      assert.deepEqual(
        (await listed('walk/a')).map((o) => o.key),
        ['walk/a-b', 'walk/a.c', 'walk/a/1', 'walk/a/2/deep', 'walk/ab/3'],
        'a prefix matches as text',
      );
      assert.deepEqual((await listed('walk')).map((o) => o.key).at(-1), 'walking/x');
      assert.deepEqual(await listed('walk/none/'), []);
      assert.ok(
        (await listed('')).some((o) => o.key === 'walking/x'),
        'the empty prefix lists everything',
      );
      await assert.rejects(async () => {
        for await (const _ of store.list('../')) assert.fail('nothing listed');
      }, /bad object prefix/);
    });

    test('bad keys, prefixes and content types throw before anything is stored', async () => {
      for (const key of BAD_KEYS) {
        const label = JSON.stringify(key);
        await assert.rejects(store.put(key, Buffer.from('x'), { contentType: 'text/plain' }), /bad object key/, `put ${label}`);
        await assert.rejects(store.get(key), /bad object key/, `get ${label}`);
        await assert.rejects(store.getStream(key), /bad object key/, `getStream ${label}`);
        await assert.rejects(store.delete(key), /bad object key/, `delete ${label}`);
      }
      for (const prefix of ['/', '/a', '../', 'a//', 'a/../', 'a b/']) {
        await assert.rejects(store.listOlderThan(prefix, new Date(), 10), /bad object prefix/, `listOlderThan ${JSON.stringify(prefix)}`);
      }
      for (const contentType of ['', 'image/png\r\nx-injected: 1', 'bild/ä']) {
        await assert.rejects(store.put('content-type/x', Buffer.from('x'), { contentType }), /bad content type/, JSON.stringify(contentType));
      }
      assert.equal(await store.get('content-type/x'), null);
    });
  });
}

describe('local object store', () => {
  test('keeps each object as a plain file under files/, in directories of mode 0700, and leaves no temporary file', async () => {
    const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-objects-')), 'objects');
    try {
      const store = new LocalObjectStore({ rootDir: root });
      assert.equal(store.description, `local:${root}`);
      assert.equal(fs.existsSync(root), false, 'nothing is created before the first write');
      const body = binaryBody(5000);
      await store.put('screenshots/ses_1/2.png', body, { contentType: 'image/png' });
      assert.ok(fs.readFileSync(path.join(root, 'files', 'screenshots', 'ses_1', '2.png')).equals(body), 'the file holds the bytes as given');
      for (const dir of [root, path.join(root, 'files', 'screenshots', 'ses_1')]) assert.equal(fs.statSync(dir).mode & 0o777, 0o700, dir);
      assert.equal(fs.statSync(path.join(root, 'files', 'screenshots', 'ses_1', '2.png')).mode & 0o777, 0o600);
      assert.deepEqual(fs.readdirSync(path.join(root, 'tmp')), []);
    } finally {
      fs.rmSync(path.dirname(root), { recursive: true, force: true });
    }
  });

  test('delete removes the directories it left empty, and a put into a just-pruned directory still lands', async () => {
    const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-objects-')), 'objects');
    try {
      const store = new LocalObjectStore({ rootDir: root });
      await store.put('a/b/c/one.png', Buffer.from('1'), { contentType: 'image/png' });
      await store.put('a/keep.png', Buffer.from('k'), { contentType: 'image/png' });
      await store.delete('a/b/c/one.png');
      assert.equal(fs.existsSync(path.join(root, 'files', 'a', 'b')), false, 'a/b/c and a/b are gone');
      assert.equal(fs.existsSync(path.join(root, 'meta', 'a', 'b')), false, 'so are their sidecars');
      assert.ok(fs.existsSync(path.join(root, 'files', 'a', 'keep.png')));
      // Puts and deletes racing in one directory: every put that finished is readable.
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 2 ? store.delete(`race/x/${i - 1}.png`) : store.put(`race/x/${i}.png`, Buffer.from(String(i)), { contentType: 'image/png' }),
        ),
      );
      await store.put('race/x/final.png', Buffer.from('f'), { contentType: 'image/png' });
      assert.equal((await store.get('race/x/final.png'))?.body.toString(), 'f');
    } finally {
      fs.rmSync(path.dirname(root), { recursive: true, force: true });
    }
  });

  test('an object whose sidecar is lost reads as application/octet-stream; a stale temporary file is removed at start', async () => {
    const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-objects-')), 'objects');
    try {
      await new LocalObjectStore({ rootDir: root }).put('k/v.bin', Buffer.from('v'), { contentType: 'image/png' });
      fs.rmSync(path.join(root, 'meta', 'k', 'v.bin'));
      const stale = path.join(root, 'tmp', 'deadbeef.tmp');
      fs.writeFileSync(stale, 'half');
      const hourAgo = new Date(Date.now() - 2 * 3_600_000);
      fs.utimesSync(stale, hourAgo, hourAgo);
      const store = new LocalObjectStore({ rootDir: root });
      assert.equal((await store.get('k/v.bin'))?.contentType, 'application/octet-stream');
      await store.put('k/w.bin', Buffer.from('w'), { contentType: 'image/png' });
      assert.equal(fs.existsSync(stale), false);
    } finally {
      fs.rmSync(path.dirname(root), { recursive: true, force: true });
    }
  });
});

describe('S3 object store', () => {
  const options = () => ({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    bucket: BUCKET,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
  });

  test('keys live under the prefix in the bucket, and listing follows continuation pages', async () => {
    const store = new S3ObjectStore({ ...options(), prefix: '/pages/run-1/', listPageSize: 2 });
    const other = new S3ObjectStore({ ...options(), prefix: 'pages' });
    try {
      assert.equal(store.description, `s3://${BUCKET}/pages/run-1/ at ${s3.endpoint}`);
      for (let i = 0; i < 5; i++) await store.put(`p/${i}.png`, Buffer.from([i]), { contentType: 'image/png' });
      assert.deepEqual((await store.listOlderThan('p/', new Date(Date.now() + 60_000), 100)).sort(), ['p/0.png', 'p/1.png', 'p/2.png', 'p/3.png', 'p/4.png']);
      assert.equal((await store.listOlderThan('p/', new Date(Date.now() + 60_000), 3)).length, 3);
      const listed: string[] = [];
      for await (const object of store.list('p/')) listed.push(object.key);
      assert.deepEqual(listed, ['p/0.png', 'p/1.png', 'p/2.png', 'p/3.png', 'p/4.png'], 'list follows the pages too');
      assert.deepEqual((await other.get('run-1/p/3.png'))?.body, Buffer.from([3]), 'stored at <prefix>/<key>');
    } finally {
      store.destroy();
      other.destroy();
    }
  });

  test('a missing bucket and an unknown access key are errors that name the store, not missing objects', async () => {
    const noBucket = new S3ObjectStore({ ...options(), bucket: 'no-such-bucket', prefix: '' });
    // s3rver checks the access key id, not V4 signatures: a wrong secret would pass there.
    const badKey = new S3ObjectStore({ ...options(), accessKeyId: 'NOT-A-KEY', prefix: '' });
    try {
      await assert.rejects(noBucket.get('x'), /S3 GetObject "x" on s3:\/\/no-such-bucket\/.*NoSuchBucket/);
      await assert.rejects(noBucket.put('x', Buffer.from('x'), { contentType: 'text/plain' }), /NoSuchBucket/);
      await assert.rejects(noBucket.listOlderThan('', new Date(), 10), /NoSuchBucket/);
      await assert.rejects(badKey.put('x', Buffer.from('x'), { contentType: 'text/plain' }), /InvalidAccessKeyId/);
      await assert.rejects(badKey.get('x'), /InvalidAccessKeyId/);
    } finally {
      noBucket.destroy();
      badKey.destroy();
    }
  });

  test('a server that is not there fails fast with an error', async () => {
    const store = new S3ObjectStore({ ...options(), endpoint: 'http://127.0.0.1:1', prefix: '', connectionTimeoutMs: 1000 });
    try {
      await assert.rejects(store.get('x'), /S3 GetObject "x"/);
    } finally {
      store.destroy();
    }
  });
});

describe('object store configuration', () => {
  test('defaults: local, under <data dir>/objects; S3 settings for a path-style store in us-east-1; screenshots kept 7 days', () => {
    const config = loadConfig({ SANDBOXD_DATA_DIR: '/srv/sandboxd' });
    assert.deepEqual(
      [
        config.objects.objectStore,
        config.objects.objectStoreDir,
        config.objects.s3Region,
        config.objects.s3Prefix,
        config.objects.s3ForcePathStyle,
        config.browser.screenshotRetentionDays,
      ],
      ['local', '/srv/sandboxd/objects', 'us-east-1', '', true, 7],
    );
    assert.equal(createObjectStore(config.objects).description, 'local:/srv/sandboxd/objects');
    assert.equal(createObjectStore(loadConfig({ SANDBOXD_OBJECT_STORE_DIR: '/mnt/objects' }).objects).description, 'local:/mnt/objects');
  });

  test('the S3 settings are parsed and reach the store', () => {
    const config = loadConfig({
      SANDBOXD_OBJECT_STORE: 's3',
      SANDBOXD_S3_ENDPOINT: 'https://objects.example.com/',
      SANDBOXD_S3_REGION: 'auto',
      SANDBOXD_S3_BUCKET: 'shots.example',
      SANDBOXD_S3_PREFIX: '/sandboxd/prod/',
      SANDBOXD_S3_FORCE_PATH_STYLE: 'false',
      SANDBOXD_SCREENSHOT_RETENTION_DAYS: '0',
    });
    assert.deepEqual(
      [
        config.objects.s3Endpoint,
        config.objects.s3Region,
        config.objects.s3Bucket,
        config.objects.s3Prefix,
        config.objects.s3ForcePathStyle,
        config.objects.s3AccessKeyId,
        config.browser.screenshotRetentionDays,
      ],
      ['https://objects.example.com', 'auto', 'shots.example', 'sandboxd/prod', false, null, 0],
    );
    const store = createObjectStore(config.objects);
    assert.equal(store.description, 's3://shots.example/sandboxd/prod/ at https://objects.example.com');
    (store as S3ObjectStore).destroy();
  });

  test('s3 without an endpoint or a bucket, half a key pair and bad values fail at start naming the variable', () => {
    const s3Env = { SANDBOXD_OBJECT_STORE: 's3', SANDBOXD_S3_ENDPOINT: 'http://127.0.0.1:9000', SANDBOXD_S3_BUCKET: 'b-1' };
    const cases: [Record<string, string>, RegExp][] = [
      [{ SANDBOXD_OBJECT_STORE: 's3' }, /^SANDBOXD_S3_ENDPOINT: required when SANDBOXD_OBJECT_STORE=s3/],
      [{ ...s3Env, SANDBOXD_S3_BUCKET: '' }, /^SANDBOXD_S3_BUCKET: required when SANDBOXD_OBJECT_STORE=s3/],
      [{ ...s3Env, SANDBOXD_S3_ENDPOINT: '' }, /^SANDBOXD_S3_ENDPOINT: required/],
      [{ ...s3Env, SANDBOXD_S3_ACCESS_KEY_ID: 'id' }, /^SANDBOXD_S3_SECRET_ACCESS_KEY: required when SANDBOXD_S3_ACCESS_KEY_ID is set/],
      [{ ...s3Env, SANDBOXD_S3_SECRET_ACCESS_KEY: 'secret' }, /^SANDBOXD_S3_ACCESS_KEY_ID: required/],
      [{ SANDBOXD_OBJECT_STORE: 'gcs' }, /^SANDBOXD_OBJECT_STORE: expected one of local, s3/],
      [{ SANDBOXD_S3_ENDPOINT: 'ftp://x' }, /^SANDBOXD_S3_ENDPOINT: expected an http/],
      [{ SANDBOXD_S3_ENDPOINT: 'not a url' }, /^SANDBOXD_S3_ENDPOINT/],
      [{ SANDBOXD_S3_BUCKET: 'Bad_Bucket' }, /^SANDBOXD_S3_BUCKET/],
      [{ SANDBOXD_S3_PREFIX: 'a/../b' }, /^SANDBOXD_S3_PREFIX/],
      [{ SANDBOXD_S3_REGION: 'eu west' }, /^SANDBOXD_S3_REGION/],
      [{ SANDBOXD_S3_FORCE_PATH_STYLE: 'maybe' }, /^SANDBOXD_S3_FORCE_PATH_STYLE/],
      [{ SANDBOXD_SCREENSHOT_RETENTION_DAYS: '-1' }, /^SANDBOXD_SCREENSHOT_RETENTION_DAYS/],
    ];
    for (const [env, pattern] of cases) {
      assert.throws(
        () => loadConfig(env),
        (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
        JSON.stringify(env),
      );
    }
    assert.doesNotThrow(() => loadConfig({ SANDBOXD_S3_ACCESS_KEY_ID: 'id' }), 'S3 settings are not checked while the store is local');
  });
});
