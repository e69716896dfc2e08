/**
 * bench:artifacts — the artifact store (packages/server/src/storage/artifacts/) moving a file shaped like a VM's
 * memory: `BENCH_FILE_MIB` (default 512) MiB, about half random data and half holes, in runs of 256 KiB to 16 MiB
 * (so some chunks are all zeros, most hold both). Side by side in one run, to the local object store and to an
 * S3-compatible server (s3rver in a child process on 127.0.0.1, as the tests use it):
 *   - the first upload (every stored chunk sent) and a download into a new directory (every chunk checked), in
 *     MiB/s of the file's size and of the data actually moved;
 *   - a second upload after 5 % of the chunks changed (a few KiB each, as a VM running between two pauses would
 *     change them): the bytes sent and the time, by the same process (it remembers the chunks it stored and asks
 *     nothing about them); then another 5 % changed and uploaded by another node (a new store instance: one HEAD
 *     per chunk).
 * s3rver is a test server (Koa, files on disk) and the S3 figures are its, not those of a real store. The file is
 * in the page cache: the figures are the store's and the hashing's, not the disk's.
 *
 *   npm run bench:artifacts            (BENCH_FILE_MIB, BENCH_CHUNK_MIB = 4, BENCH_CONCURRENCY = 4)
 *
 * Ends with one JSON line.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ArtifactStore, type ArtifactRef } from '../packages/server/src/storage/artifacts/index.ts';
import type { ObjectStore } from '../packages/server/src/storage/index.ts';
import { LocalObjectStore } from '../packages/server/src/storage/local-object-store.ts';
import { S3ObjectStore } from '../packages/server/src/storage/s3-object-store.ts';
import { startS3Server } from '../packages/server/test/helpers/s3-server.ts';

const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 512);
const CHUNK_BYTES = Number(process.env.BENCH_CHUNK_MIB ?? 4) * 1024 * 1024;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const CHANGED_SHARE = 0.05;
const MIB = 1024 * 1024;
const log = (message: string) => process.stderr.write(`[bench:artifacts] ${message}\n`);
const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;
const rate = (bytes: number, ms: number) => Math.round((bytes / MIB / (ms / 1000)) * 10) / 10;

/** A small deterministic generator (the file's shape is the same on every run; its data is random). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Writes the memory-shaped file; returns its data bytes (the rest are holes). */
function makeMemoryFile(file: string, sizeBytes: number): number {
  const random = lcg(37);
  const fd = fs.openSync(file, 'w', 0o600);
  let dataBytes = 0;
  try {
    fs.ftruncateSync(fd, sizeBytes);
    const block = 64 * 1024;
    let offset = 0;
    // Pairs of runs of one length: random data, then a hole; so half the file is data, whatever the lengths drawn.
    while (offset < sizeBytes) {
      const length = Math.min(sizeBytes - offset, block * (4 + Math.floor(random() * 252)));
      for (let at = 0; at < length; at += MIB) fs.writeSync(fd, randomBytes(Math.min(MIB, length - at)), 0, Math.min(MIB, length - at), offset + at);
      dataBytes += length;
      offset += 2 * length;
    }
  } finally {
    fs.closeSync(fd);
  }
  return dataBytes;
}

/** Changes a few KiB in `share` of the file's chunks (picked at random, data or hole alike). */
function changeChunks(file: string, sizeBytes: number, share: number, seed: number): number {
  const chunks = Math.ceil(sizeBytes / CHUNK_BYTES);
  const picked = new Set<number>();
  const random = lcg(seed);
  while (picked.size < Math.max(1, Math.round(chunks * share))) picked.add(Math.floor(random() * chunks));
  const fd = fs.openSync(file, 'r+');
  try {
    for (const index of picked) {
      const length = Math.min(CHUNK_BYTES, sizeBytes - index * CHUNK_BYTES);
      const at = index * CHUNK_BYTES + Math.floor(random() * Math.max(1, length - 4096));
      fs.writeSync(fd, randomBytes(Math.min(4096, length)), 0, Math.min(4096, length), at);
    }
  } finally {
    fs.closeSync(fd);
  }
  return picked.size;
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

interface Row {
  store: string;
  uploadMs: number;
  uploadMiBps: number;
  uploadDataMiBps: number;
  downloadMs: number;
  downloadMiBps: number;
  downloadDataMiBps: number;
  sameNodeSentMiB: number;
  sameNodeMs: number;
  otherNodeSentMiB: number;
  otherNodeMs: number;
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-artifacts-'));
  const s3 = await startS3Server(['bench']);
  const rows: Row[] = [];
  const results: Record<string, unknown> = { fileMiB: FILE_MIB, chunkMiB: CHUNK_BYTES / MIB, concurrency: CONCURRENCY };
  try {
    const file = path.join(work, 'memory');
    const size = FILE_MIB * MIB;
    const written = makeMemoryFile(file, size);
    log(`made ${FILE_MIB} MiB, ${mib(written)} MiB of it random data`);
    const objectStores: [string, ObjectStore][] = [
      ['local', new LocalObjectStore({ rootDir: path.join(work, 'objects') })],
      [
        's3rver',
        new S3ObjectStore({
          endpoint: s3.endpoint,
          region: 'us-east-1',
          bucket: 'bench',
          prefix: '',
          accessKeyId: s3.accessKeyId,
          secretAccessKey: s3.secretAccessKey,
          forcePathStyle: true,
        }),
      ],
    ];
    const stores = objectStores.map(([name, objects]) => ({
      name,
      objects,
      artifacts: new ArtifactStore({ objects, chunkBytes: CHUNK_BYTES, concurrency: CONCURRENCY }),
    }));
    const owner = { userId: 1, nodeId: 'bench' };
    const first: ArtifactRef = { kind: 'pause', id: 'vm_bench/1' };
    const second: ArtifactRef = { kind: 'pause', id: 'vm_bench/2' };
    const third: ArtifactRef = { kind: 'pause', id: 'vm_bench/3' };
    const partial: Partial<Row>[] = [];
    for (const { name, artifacts } of stores) {
      log(`${name}: first upload`);
      const [uploadMs, uploaded] = await timed(() => artifacts.upload(first, [{ name: 'memory', path: file }], { owner }));
      results.dataBytes = uploaded.dataBytes;
      results.zeroChunks = uploaded.files[0]!.chunks.filter((chunk) => chunk === null).length;
      results.chunks = uploaded.files[0]!.chunks.length;
      log(`${name}: download`);
      const target = path.join(work, `restore-${name}`);
      const [downloadMs] = await timed(() => artifacts.download(first, target));
      fs.rmSync(target, { recursive: true, force: true });
      partial.push({
        store: name,
        uploadMs: Math.round(uploadMs),
        uploadMiBps: rate(size, uploadMs),
        uploadDataMiBps: rate(uploaded.dataBytes, uploadMs),
        downloadMs: Math.round(downloadMs),
        downloadMiBps: rate(size, downloadMs),
        downloadDataMiBps: rate(uploaded.dataBytes, downloadMs),
      });
    }
    // Two rounds of changes, each to 5 % of the chunks: the first uploaded by the process that stored the rest (it
    // remembers those chunks), the second by another node (a new store instance: it asks about every chunk).
    const changed = changeChunks(file, size, CHANGED_SHARE, 91);
    results.changedChunks = changed;
    log(`changed ${changed} chunks`);
    const sameNode: { sent: number; ms: number }[] = [];
    for (const { name, artifacts } of stores) {
      log(`${name}: second upload, same process`);
      const [ms, uploaded] = await timed(() => artifacts.upload(second, [{ name: 'memory', path: file }], { owner }));
      sameNode.push({ sent: uploaded.uploadedBytes, ms });
    }
    changeChunks(file, size, CHANGED_SHARE, 92);
    for (const [index, { name, objects }] of stores.entries()) {
      log(`${name}: third upload, another node`);
      const other = new ArtifactStore({ objects, chunkBytes: CHUNK_BYTES, concurrency: CONCURRENCY });
      const [otherNodeMs, fromOther] = await timed(() => other.upload(third, [{ name: 'memory', path: file }], { owner }));
      rows.push({
        ...(partial[index] as Row),
        sameNodeSentMiB: mib(sameNode[index]!.sent),
        sameNodeMs: Math.round(sameNode[index]!.ms),
        otherNodeSentMiB: mib(fromOther.uploadedBytes),
        otherNodeMs: Math.round(otherNodeMs),
      });
    }
    for (const { objects } of stores) if (objects instanceof S3ObjectStore) objects.destroy();
  } finally {
    await s3.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }

  console.log(
    `bench:artifacts — ${FILE_MIB} MiB file shaped like VM memory (${mib(Number(results.dataBytes))} MiB in stored chunks, ` +
      `${results.zeroChunks} of ${results.chunks} chunks all zeros), ${CHUNK_BYTES / MIB} MiB chunks, ${CONCURRENCY} at once\n`,
  );
  console.log(
    `${'store'.padEnd(8)}  ${'upload MiB/s'.padStart(20)}  ${'download MiB/s'.padStart(20)}  ${`2nd upload, ${results.changedChunks} chunks changed`.padStart(44)}`,
  );
  console.log(
    `${''.padEnd(8)}  ${'file / data'.padStart(20)}  ${'file / data'.padStart(20)}  ${'same process: sent, time'.padStart(26)}  ${'other node'.padStart(16)}`,
  );
  for (const row of rows) {
    console.log(
      `${row.store.padEnd(8)}  ${`${row.uploadMiBps} / ${row.uploadDataMiBps}`.padStart(20)}  ${`${row.downloadMiBps} / ${row.downloadDataMiBps}`.padStart(20)}  ` +
        `${`${row.sameNodeSentMiB} MiB, ${(row.sameNodeMs / 1000).toFixed(2)} s`.padStart(26)}  ${`${row.otherNodeSentMiB} MiB, ${(row.otherNodeMs / 1000).toFixed(2)} s`.padStart(16)}`,
    );
  }
  console.log(JSON.stringify({ ...results, rows }));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
