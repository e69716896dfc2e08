/** File operations through the real agent: byte-exact round trips (100 MiB streamed), metadata, errors, tar. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { GuestPathError, type AgentClient } from '../../src/agent/index.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

/** A deterministic pseudo-random stream of `size` bytes, generated as it is read (nothing held whole). */
function pattern(size: number, seed: number): Readable {
  let sent = 0;
  let state = seed;
  return new Readable({
    read() {
      if (sent >= size) {
        this.push(null);
        return;
      }
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, size - sent));
      for (let i = 0; i < chunk.length; i += 4) {
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
        chunk.writeUInt32LE(state, i);
      }
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

async function sha256(stream: AsyncIterable<Buffer | Uint8Array>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest('hex');
}

describe('agent files', () => {
  let agent: AgentFixture;
  let client: AgentClient;
  before(async () => {
    agent = await startAgent(['--no-prestart-python']);
    client = await agent.connect();
  });
  after(() => agent.stop());

  it('writes and reads binary content byte-exact, creating parent directories and setting the mode', async () => {
    const path = join(agent.dir, 'nested/deeper/data.bin');
    const bytes = randomBytes(300_000);
    bytes[0] = 0;
    const written = await client.writeFile(path, bytes, { mode: 0o751 });
    assert.deepEqual(written, { path, size: bytes.length });
    assert.deepEqual(await readFile(path), bytes);
    assert.equal((await stat(path)).mode & 0o777, 0o751);
    const download = await client.readFile(path);
    assert.equal(download.size, bytes.length);
    assert.equal(download.mode, 0o751);
    assert.deepEqual(Buffer.concat(await download.stream.toArray()), bytes);
  });

  it('writes empty files and overwrites existing ones', async () => {
    const path = join(agent.dir, 'empty');
    await client.writeFile(path, 'old content');
    await client.writeFile(path, '');
    assert.equal((await client.readFileBytes(path)).length, 0);
  });

  it('streams 100 MiB each way without corruption', async () => {
    const size = 100 * 1024 * 1024;
    const path = join(agent.dir, 'big.bin');
    const expected = await sha256(pattern(size, 7));
    let started = performance.now();
    await client.writeFile(path, pattern(size, 7));
    const uploadSeconds = (performance.now() - started) / 1000;
    assert.equal((await stat(path)).size, size);
    started = performance.now();
    const download = await client.readFile(path);
    const actual = await sha256(download.stream);
    const downloadSeconds = (performance.now() - started) / 1000;
    assert.equal(actual, expected);
    assert.equal(await sha256((await import('node:fs')).createReadStream(path)), expected);
    console.log(
      `100 MiB over the unix link: upload ${(100 / uploadSeconds).toFixed(0)} MiB/s, download ${(100 / downloadSeconds).toFixed(0)} MiB/s (hashing included)`,
    );
  });

  it('stats, lists, creates and removes', async () => {
    const base = join(agent.dir, 'tree');
    await client.mkdir(join(base, 'a/b'));
    await client.writeFile(join(base, 'file.txt'), 'x');
    await (await import('node:fs/promises')).symlink('file.txt', join(base, 'link'));
    const entries = await client.listDir(base);
    assert.deepEqual(
      entries.map((entry) => [entry.name, entry.type]),
      [
        ['a', 'directory'],
        ['file.txt', 'file'],
        ['link', 'symlink'],
      ],
    );
    assert.equal(entries[2]?.symlinkTarget, 'file.txt');
    const info = await client.stat(join(base, 'file.txt'));
    assert.equal(info.size, 1);
    assert.equal(info.type, 'file');
    await assert.rejects(client.remove(join(base, 'a')), (error: unknown) => error instanceof GuestPathError && error.code === 'ENOTEMPTY');
    assert.deepEqual(await client.remove(join(base, 'a'), { recursive: true }), { removed: true });
    assert.deepEqual(await client.remove(join(base, 'a')), { removed: false });
    await assert.rejects(client.mkdir(join(base, 'file.txt/sub')), { code: 'ENOTDIR' });
  });

  it('rejects relative paths, NUL bytes, and reports missing files as GuestPathError', async () => {
    await assert.rejects(client.stat('relative/path'), (error: unknown) => error instanceof GuestPathError && error.code === 'INVALID_PATH');
    await assert.rejects(client.writeFile('/tmp/a\0b', 'x'), { code: 'INVALID_PATH' });
    await assert.rejects(client.readFile(join(agent.dir, 'missing')), (error: unknown) => {
      assert.ok(error instanceof GuestPathError);
      assert.equal(error.code, 'ENOENT');
      assert.equal(error.path, join(agent.dir, 'missing'));
      return true;
    });
    await assert.rejects(client.readFile(agent.dir), { code: 'EISDIR' });
  });

  it('does not leave a partial file when an upload is cut off', async () => {
    const path = join(agent.dir, 'interrupted.bin');
    await client.writeFile(path, 'previous');
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(64 * 1024));
        setTimeout(() => this.destroy(new Error('source failed')), 20);
      },
    });
    await assert.rejects(client.writeFile(path, failing));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await readFile(path)).toString(), 'previous');
    const leftovers = (await client.listDir(agent.dir)).filter((entry) => entry.name.includes('sandboxd-upload'));
    assert.deepEqual(leftovers, []);
  });

  it('extracts a streamed tar archive, gzip too, and reports a broken one', async () => {
    const source = join(agent.dir, 'tar-source');
    await mkdir(join(source, 'sub'), { recursive: true });
    await writeFile(join(source, 'hello.txt'), 'hello');
    await writeFile(join(source, 'sub/data.bin'), randomBytes(100_000));
    for (const gzip of [false, true]) {
      const tar = spawn('tar', ['-c', ...(gzip ? ['-z'] : []), '-C', source, '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const target = join(agent.dir, gzip ? 'extracted-gz' : 'extracted');
      await client.extractTar(target, tar.stdout, { gzip });
      assert.equal(await readFile(join(target, 'hello.txt'), 'utf8'), 'hello');
      assert.deepEqual(await readFile(join(target, 'sub/data.bin')), await readFile(join(source, 'sub/data.bin')));
    }
    await assert.rejects(client.extractTar(join(agent.dir, 'broken'), randomBytes(5000)), { code: 'EXTRACT_FAILED' });
  });
});
