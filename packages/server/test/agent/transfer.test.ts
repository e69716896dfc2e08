/**
 * Large files through the transfer share, with the real agent on the host and a plain directory standing in
 * for the VM's 9p share (real VMs run the same code in the engine tests): chunking at and around chunk
 * boundaries, modes, failures that must leave nothing behind, and a guest that plants things in the area.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { AgentClient } from '../../src/agent/index.ts';
import { CHUNK_BYTES, INLINE_MAX_BYTES, TransferLane } from '../../src/agent/transfer.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

/** `size` bytes as a stream of uneven pieces (so chunk boundaries fall inside them). */
function piecewise(bytes: Buffer): Readable {
  const pieces: Buffer[] = [];
  for (let at = 0, step = 700_001; at < bytes.length; at += step) pieces.push(bytes.subarray(at, at + step));
  return Readable.from(pieces);
}

const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('agent file transfer share', () => {
  let agent: AgentFixture;
  let client: AgentClient;
  let area: string;
  before(async () => {
    area = await mkdtemp(join(tmpdir(), 'sandboxd-transfer-area-'));
    agent = await startAgent(['--no-prestart-python', '--transfer-dir', area]);
    client = await agent.connect({ transferDir: area });
  });
  after(async () => {
    await agent.stop();
    await rm(area, { recursive: true, force: true });
  });

  it('announces the capability', () => {
    assert.ok(client.agent.capabilities.includes('files-transfer'));
  });

  for (const size of [INLINE_MAX_BYTES + 1, CHUNK_BYTES, 2 * CHUNK_BYTES, 2 * CHUNK_BYTES + 12_345]) {
    it(`round-trips ${size} bytes byte-exact and leaves the area empty`, async () => {
      const bytes = randomBytes(size);
      const path = join(agent.dir, `up-${size}.bin`);
      // Every chunk is a new file name in the area: count them to see the bytes went that way.
      const names = new Set<string>();
      const watcher = watch(area, (_event, name) => name && names.add(name));
      const written = await client.writeFile(path, piecewise(bytes), { mode: 0o640 });
      assert.deepEqual(written, { path, size });
      assert.equal(digest(await readFile(path)), digest(bytes));
      assert.equal((await stat(path)).mode & 0o777, 0o640);
      const download = await client.readFile(path);
      assert.equal(download.size, size);
      assert.equal(download.mode, 0o640);
      assert.equal(digest(Buffer.concat(await download.stream.toArray())), digest(bytes));
      await new Promise((resolve) => setTimeout(resolve, 100));
      watcher.close();
      assert.equal(names.size, 2 * Math.ceil(size / CHUNK_BYTES), 'one chunk file per 8 MiB, each way');
      assert.deepEqual(await readdir(area), []);
      assert.deepEqual(
        (await readdir(agent.dir)).filter((name) => name.includes('sandboxd-upload')),
        [],
      );
    });
  }

  it('keeps small files on the link: nothing appears in the area', async () => {
    const path = join(agent.dir, 'small.txt');
    await client.writeFile(path, Readable.from([Buffer.from('hello')]));
    assert.equal((await client.readFileBytes(path)).toString(), 'hello');
    assert.deepEqual(await readdir(area), []);
  });

  it('a source that fails midway leaves the old file and no temporary file', async () => {
    const path = join(agent.dir, 'kept.bin');
    await writeFile(path, 'old');
    async function* failing(): AsyncGenerator<Buffer> {
      yield randomBytes(CHUNK_BYTES + 5);
      yield randomBytes(CHUNK_BYTES);
      throw new Error('source broke');
    }
    await assert.rejects(client.writeFile(path, Readable.from(failing())), /source broke/);
    assert.equal(await readFile(path, 'utf8'), 'old');
    assert.deepEqual(
      (await readdir(agent.dir)).filter((name) => name.includes('sandboxd-upload')),
      [],
    );
    assert.deepEqual(await readdir(area), []);
  });

  it('an abandoned download removes its chunks', async () => {
    const path = join(agent.dir, 'big.bin');
    await writeFile(path, randomBytes(3 * CHUNK_BYTES));
    const download = await client.readFile(path);
    for await (const piece of download.stream) {
      assert.ok(piece.length > 0);
      break; // destroys the stream
    }
    // The stream closes once its clean-up is done, the prefetched chunk's included. (Polling the area until
    // empty was racy: it could see the moment between the first chunk's removal and the prefetched one's arrival.)
    if (!download.stream.closed) await new Promise((resolve) => download.stream.once('close', resolve));
    assert.deepEqual(await readdir(area), []);
  });

  it('a download dropped before it is read, or never read within its deadline, removes its chunk', async () => {
    const path = join(agent.dir, 'unread.bin');
    await writeFile(path, randomBytes(CHUNK_BYTES + 1));
    const emptied = async () => {
      for (let i = 0; i < 100 && (await readdir(area)).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(await readdir(area), []);
    };
    const dropped = await client.readFile(path);
    assert.equal((await readdir(area)).length, 1, 'the first chunk waits in the area');
    dropped.stream.destroy();
    await emptied();
    const forgotten = await client.readFile(path, { timeoutMs: 500 });
    const failed = new Promise<Error>((resolve) => forgotten.stream.once('error', resolve));
    assert.equal((await failed).name, 'AgentTimeoutError');
    await emptied();
    // The slots came back: four more downloads at once still work.
    const again = await Promise.all(Array.from({ length: 4 }, () => client.readFileBytes(path)));
    assert.ok(again.every((bytes) => bytes.length === CHUNK_BYTES + 1));
  });

  it('the host never follows what the guest planted in the area', async () => {
    const lane = new TransferLane(area);
    const secret = join(agent.dir, 'host-secret');
    await writeFile(secret, 'host only');
    const name = lane.newName();
    await symlink(secret, join(area, name));
    await assert.rejects(lane.takeChunk(name, 9), /ELOOP|not a 9-byte file/);
    const planted = lane.newName();
    await symlink(secret, join(area, planted));
    await assert.rejects(lane.writeChunk(planted, [Buffer.from('overwrite')]), { code: 'EEXIST' });
    assert.equal(await readFile(secret, 'utf8'), 'host only');
    await mkdir(join(area, name));
    await assert.rejects(lane.takeChunk(name, 0), /not a 0-byte file/);
    await rm(join(area, name), { recursive: true });
    await lane.discard(planted);
    assert.deepEqual(await readdir(area), []);
  });

  it('a chunk the guest cannot find fails the upload with what each side saw, and nothing is left behind', async () => {
    // A host whose area is not the agent's share: the guest looks for each chunk in vain.
    const elsewhere = await mkdtemp(join(tmpdir(), 'sandboxd-transfer-elsewhere-'));
    const misdirected = await agent.connect({ transferDir: elsewhere });
    try {
      const path = join(agent.dir, 'lost.bin');
      await assert.rejects(misdirected.writeFile(path, Readable.from([randomBytes(INLINE_MAX_BYTES + 1)])), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'TRANSFER_CHUNK_MISSING');
        assert.match(error.message, /transfer chunk [0-9a-f]{32} is missing from the share \(9p mounted: false; 0 entries\); the host's area still holds it/);
        return true;
      });
      assert.deepEqual(await readdir(elsewhere), []);
      assert.deepEqual(
        (await readdir(agent.dir)).filter((name) => name.startsWith('.lost.bin')),
        [],
      );
    } finally {
      await misdirected.close();
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('a quiesce holds new transfers back until the thaw (a live capture needs the share unmounted)', async () => {
    // The agent serves one host at a time: the test before took the link over with its own connection.
    client = await agent.connect({ transferDir: area });
    assert.ok(client.agent.capabilities.includes('snapshot-quiesce'));
    const quiesced = await client.quiesce({ holdMs: 30_000 });
    // A plain directory stands in for the share here: there is nothing to unmount.
    assert.equal(quiesced.unmounted, false);
    const bytes = randomBytes(INLINE_MAX_BYTES + 1);
    const path = join(agent.dir, 'held.bin');
    let done = false;
    const upload = client.writeFile(path, Readable.from([bytes])).then((answer) => {
      done = true;
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(done, false, 'the upload waits while the share is held');
    await client.thaw();
    assert.deepEqual(await upload, { path, size: bytes.length });
    assert.equal(digest(await readFile(path)), digest(bytes));
  });

  it('a hold the host never lifts runs out by itself', async () => {
    await client.quiesce({ holdMs: 300 });
    const started = Date.now();
    const path = join(agent.dir, 'after-hold.bin');
    await client.writeFile(path, Readable.from([randomBytes(INLINE_MAX_BYTES + 1)]));
    const waited = Date.now() - started;
    assert.ok(waited >= 200 && waited < 10_000, `waited ${waited} ms`);
  });
});
