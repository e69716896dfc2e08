/**
 * The in-sandbox filesystem through the unmodified `e2b` SDK (`sandbox.files`): envd's `filesystem.Filesystem`
 * Connect service and its HTTP `/files`, over sandboxd's files. One sandbox for the whole file.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AuthenticationError, FileNotFoundError, FileType, FilesystemEventType, Sandbox, type FilesystemEvent } from 'e2b';
import { Filesystem } from '../../src/api/e2b/envd/gen/filesystem/filesystem_pb.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/** Waits until `check` holds (polling), or fails saying what was awaited. */
async function eventually(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const MB = 1024 * 1024;
const UPLOAD_LIMIT_BYTES = 26 * MB;

/** A stream of `chunks` chunks of 1 MiB, chunk i filled with the byte i + 1. */
function numberedChunks(chunks: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === chunks) controller.close();
      else controller.enqueue(new Uint8Array(MB).fill(++sent));
    },
  });
}

describe('e2b files', () => {
  let server: TestServer;
  let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
  let sandbox: Sandbox;
  before(async () => {
    // An upload limit just above the large file's size, so one past it is refused in this file's one sandbox.
    server = await startTestServer({ config: { uploadLimitBytes: UPLOAD_LIMIT_BYTES } });
    const { apiKey } = await server.createUserWithKey('e2bfiles', 'pro');
    opts = { apiKey, apiUrl: `${server.baseUrl}/e2b`, sandboxUrl: `${server.baseUrl}/e2b/sandbox` };
    sandbox = await Sandbox.create(opts);
  });
  after(async () => {
    await sandbox?.kill().catch(() => undefined);
    await server.close();
  });

  test('write and read text and bytes; relative paths are the home directory', async () => {
    const info = await sandbox.files.write('hello.txt', 'hello, files\n');
    assert.deepEqual({ name: info.name, path: info.path, type: info.type }, { name: 'hello.txt', path: '/home/user/hello.txt', type: 'file' });
    assert.equal(await sandbox.files.read('/home/user/hello.txt'), 'hello, files\n');
    const bytes = new Uint8Array(70_000).map((_, index) => (index * 31) % 256);
    await sandbox.files.write('/tmp/bytes.bin', bytes.buffer);
    assert.deepEqual(await sandbox.files.read('/tmp/bytes.bin', { format: 'bytes' }), bytes);
    // A streamed body goes as application/octet-stream.
    const stream = new Blob(['streamed ', 'body']).stream();
    await sandbox.files.write('deep/er/streamed.txt', stream);
    assert.equal(await sandbox.files.read('deep/er/streamed.txt'), 'streamed body');
    assert.equal(await sandbox.files.read('/tmp/empty-file-none').catch((error: unknown) => error instanceof FileNotFoundError), true);
    // gzip both ways (the SDK's option): the body is compressed on the wire only.
    await sandbox.files.write('zipped.txt', 'zipped '.repeat(1000), { gzip: true });
    assert.equal(await sandbox.files.read('zipped.txt', { gzip: true }), 'zipped '.repeat(1000));
  });

  test('a large file streams both ways; one past the upload limit is refused', async () => {
    const chunks = 24;
    const written = await sandbox.files.write('/tmp/large.bin', numberedChunks(chunks));
    assert.equal(written.path, '/tmp/large.bin');
    assert.equal((await sandbox.files.getInfo('/tmp/large.bin')).size, chunks * MB);
    let received = 0;
    let mismatch = -1;
    for await (const piece of await sandbox.files.read('/tmp/large.bin', { format: 'stream' })) {
      for (let offset = 0; offset < piece.length && mismatch < 0; offset += 4096) {
        if (piece[offset] !== Math.floor((received + offset) / MB) + 1) mismatch = received + offset;
      }
      received += piece.length;
    }
    assert.equal(received, chunks * MB);
    assert.equal(mismatch, -1, `bytes differ at ${mismatch}`);

    await assert.rejects(sandbox.files.write('/tmp/too-large.bin', numberedChunks(UPLOAD_LIMIT_BYTES / MB + 1)), /413|upload limit/);
    assert.equal(await sandbox.files.exists('/tmp/too-large.bin'), false, 'nothing is left of a refused upload');
  });

  test('write several files at once, list with depth, exists', async () => {
    const written = await sandbox.files.write([
      { path: 'tree/a.txt', data: 'a' },
      { path: 'tree/sub/b.txt', data: 'bb' },
      { path: '/home/user/tree/sub/deeper/c.txt', data: 'ccc' },
    ]);
    assert.deepEqual(
      written.map((entry) => entry.path),
      ['/home/user/tree/a.txt', '/home/user/tree/sub/b.txt', '/home/user/tree/sub/deeper/c.txt'],
    );
    const top = await sandbox.files.list('tree');
    assert.deepEqual(
      top.map((entry) => [entry.name, entry.type]),
      [
        ['a.txt', FileType.FILE],
        ['sub', FileType.DIR],
      ],
    );
    const two = await sandbox.files.list('/home/user/tree', { depth: 2 });
    assert.deepEqual(two.map((entry) => entry.path).sort(), [
      '/home/user/tree/a.txt',
      '/home/user/tree/sub',
      '/home/user/tree/sub/b.txt',
      '/home/user/tree/sub/deeper',
    ]);
    assert.equal(two.find((entry) => entry.name === 'b.txt')?.size, 2);
    assert.equal(await sandbox.files.exists('tree/sub/deeper/c.txt'), true);
    assert.equal(await sandbox.files.exists('tree/nothing-here'), false);
    await assert.rejects(sandbox.files.list('tree/nothing-here'), FileNotFoundError);
  });

  test('makeDir, getInfo, rename, remove', async () => {
    assert.equal(await sandbox.files.makeDir('made/inner'), true);
    assert.equal(await sandbox.files.makeDir('made/inner'), false);
    const dir = await sandbox.files.getInfo('made');
    assert.equal(dir.type, FileType.DIR);
    assert.equal(dir.owner, 'user', 'a directory made as user is its own');
    assert.match(dir.permissions, /^drwx/);

    await sandbox.files.write('made/inner/f.txt', '12345');
    const file = await sandbox.files.getInfo('made/inner/f.txt');
    assert.equal(file.name, 'f.txt');
    assert.equal(file.path, '/home/user/made/inner/f.txt');
    assert.equal(file.type, FileType.FILE);
    assert.equal(file.size, 5);
    assert.equal(file.permissions, '-rw-r--r--');
    assert.equal(file.mode, 0o644);
    assert.equal(file.owner, 'user');
    assert.equal(file.group, 'user');
    assert.ok(file.modifiedTime instanceof Date && Math.abs(file.modifiedTime.getTime() - Date.now()) < 10 * 60_000, 'modified just now');
    await assert.rejects(sandbox.files.getInfo('made/none'), FileNotFoundError);

    const moved = await sandbox.files.rename('made/inner/f.txt', 'made/g.txt');
    assert.equal(moved.path, '/home/user/made/g.txt');
    assert.equal(await sandbox.files.exists('made/inner/f.txt'), false);
    assert.equal(await sandbox.files.read('made/g.txt'), '12345');

    await sandbox.files.remove('made');
    assert.equal(await sandbox.files.exists('made'), false);
    await sandbox.files.remove('made'); // nothing there: no error, as envd
  });

  test('a file written through files.write is writable by commands as user', async () => {
    await sandbox.files.write('newdir/owned.txt', 'first\n');
    const run = await sandbox.commands.run('echo more >> newdir/owned.txt && touch newdir/sibling && stat -c %U newdir newdir/owned.txt');
    assert.equal(run.stdout, 'user\nuser\n');
    assert.equal(await sandbox.files.read('newdir/owned.txt'), 'first\nmore\n');
    // As root, when asked: root's home and root's file.
    const asRoot = await sandbox.files.write('root-file.txt', 'r', { user: 'root' });
    assert.equal(asRoot.path, '/root/root-file.txt');
    assert.equal((await sandbox.files.getInfo('/root/root-file.txt', { user: 'root' })).owner, 'root');
  });

  test('watchDir sees creates and writes, recursively', async () => {
    await sandbox.files.makeDir('watched/sub');
    const events: FilesystemEvent[] = [];
    const handle = await sandbox.files.watchDir('watched', (event) => void events.push(event), { recursive: true });
    try {
      await sandbox.files.write('watched/top.txt', 'x');
      await sandbox.commands.run('echo y >> watched/sub/nested.txt');
      await eventually(
        'a create of top.txt and a write of sub/nested.txt',
        () =>
          events.some((event) => event.name === 'top.txt' && event.type === FilesystemEventType.CREATE) &&
          events.some((event) => event.name === 'sub/nested.txt' && event.type === FilesystemEventType.WRITE),
      );
    } finally {
      await handle.stop();
    }
  });

  test('polled watchers (CreateWatcher, GetWatcherEvents, RemoveWatcher)', async () => {
    await sandbox.files.makeDir('polled');
    // The SDK's JS side streams; its polled watchers are the Python SDK's: called here as it calls them.
    const { envdAccessToken } = sandbox as unknown as { envdAccessToken: string };
    const transport = createConnectTransport({
      baseUrl: opts.sandboxUrl,
      httpVersion: '1.1',
      interceptors: [
        (next) => (request) => {
          request.header.set('E2b-Sandbox-Id', sandbox.sandboxId);
          request.header.set('E2b-Sandbox-Port', '49983');
          request.header.set('X-Access-Token', envdAccessToken);
          return next(request);
        },
      ],
    });
    const client = createClient(Filesystem, transport);
    const { watcherId } = await client.createWatcher({ path: '/home/user/polled' });
    await sandbox.files.write('polled/p.txt', 'p');
    const seen: string[] = [];
    for (let attempt = 0; attempt < 100 && !seen.includes('p.txt'); attempt++) {
      const { events } = await client.getWatcherEvents({ watcherId });
      seen.push(...events.map((event) => event.name));
      if (!seen.includes('p.txt')) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(seen.includes('p.txt'), `polled events: ${seen.join(', ')}`);
    await client.removeWatcher({ watcherId });
    await assert.rejects(client.getWatcherEvents({ watcherId }), /not found/);
  });

  test('signed download and upload URLs', async () => {
    await sandbox.files.write('signed.txt', 'signed content');
    // With E2B_SANDBOX_URL set the SDK's URL resolves /files against the server's root (new URL('/files', base)):
    // its query is sent here to the base URL with the sandbox headers and without the access token.
    const viaBaseUrl = (signedUrl: string, init: RequestInit = {}) =>
      fetch(`${opts.sandboxUrl}/files${new URL(signedUrl).search}`, {
        ...init,
        headers: { 'E2b-Sandbox-Id': sandbox.sandboxId, 'E2b-Sandbox-Port': '49983', ...(init.headers as Record<string, string>) },
      });
    const download = await viaBaseUrl(await sandbox.downloadUrl('signed.txt', { useSignatureExpiration: 60 }));
    assert.equal(download.status, 200);
    assert.equal(await download.text(), 'signed content');

    const form = new FormData();
    form.append('file', new Blob(['uploaded through a signed URL']), 'signed-upload.txt');
    const upload = await viaBaseUrl(await sandbox.uploadUrl('signed-upload.txt'), { method: 'POST', body: form });
    assert.equal(upload.status, 200, await upload.clone().text());
    assert.equal(await sandbox.files.read('signed-upload.txt'), 'uploaded through a signed URL');

    const forOtherFile = new URL(await sandbox.downloadUrl('signed.txt'));
    forOtherFile.searchParams.set('path', '/etc/shadow');
    assert.equal((await viaBaseUrl(forOtherFile.toString())).status, 401, 'a signature is for one path');
    const expired = await viaBaseUrl(await sandbox.downloadUrl('signed.txt', { useSignatureExpiration: -10 }));
    assert.equal(expired.status, 401, 'an expired signature is refused');
  });

  test("another sandbox's token is refused", async () => {
    const SandboxClass = Sandbox as unknown as new (options: object) => Sandbox;
    const impostor = new SandboxClass({
      ...opts,
      sandboxId: sandbox.sandboxId,
      envdVersion: '0.5.7',
      envdAccessToken: server.services.sessionTokens.tokenFor('access', randomUUID()),
    });
    await assert.rejects(impostor.files.read('hello.txt'), AuthenticationError);
    await assert.rejects(impostor.files.list('/'), AuthenticationError);
    await assert.rejects(impostor.files.write('x.txt', 'x'), AuthenticationError);
  });
});
