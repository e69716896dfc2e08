/**
 * Any node, any time (issue 37): two engines in this process, node A and node B, each with its own data, run,
 * capture and snapshot directories, sharing one object store (a local directory, or s3rver with BENCH_S3=1). For a
 * 512 MiB VM holding some state: a plain restore (yardstick), pause + resume on the node that paused it (cache
 * hit), pause on one node + resume on the other (cache miss: the pause, and the first time what it builds on, are
 * fetched), the built-in template's first use on node B, which never saw it (its snapshot fetched instead of a cold
 * boot), upload and download throughput of the pause images, and the bytes stored for ten snapshots of one VM
 * (dedup). `npm run bench:any-node`; ends with one JSON line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { engineOptions, loadConfig } from '../packages/server/src/config/index.ts';
import type { GuestAgent } from '../packages/server/src/core/vm-engine.ts';
import type { EngineArtifacts } from '../packages/server/src/engine/artifacts.ts';
import { createEngine } from '../packages/server/src/engine/index.ts';
import type { SandboxEngine } from '../packages/server/src/engine/sandbox-engine.ts';
import { startS3Server, type TestS3Server } from '../packages/server/test/helpers/s3-server.ts';
import { percentile } from './first-result.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const log = (message: string) => process.stderr.write(`[bench:any-node] ${message}\n`);
const MIB = 2 ** 20;

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

async function shell(agent: GuestAgent, command: string): Promise<string> {
  let out = '';
  const result = await agent.exec({ argv: ['/bin/bash', '-c', command], timeoutMs: 120_000 }, { onStdout: (c) => (out += c), onStderr: (c) => (out += c) });
  if (result.exitCode !== 0) throw new Error(`${command}: exit ${result.exitCode}: ${out}`);
  return out;
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-any-node-'));
  let s3: TestS3Server | undefined;
  const store: Record<string, string | boolean> = process.env.BENCH_S3
    ? await (async () => {
        s3 = await startS3Server(['bench']);
        return { objectStore: 's3', s3Endpoint: s3.endpoint, s3Bucket: 'bench', s3AccessKeyId: s3.accessKeyId, s3SecretAccessKey: s3.secretAccessKey };
      })()
    : { objectStore: 'local', objectStoreDir: path.join(root, 'objects') };
  const captureRoots: string[] = [];
  const engineOf = (name: string, ownSnapshots: boolean): SandboxEngine => {
    const dataDir = path.join(root, name);
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const config = loadConfig(process.env, {
      dataDir,
      logLevel: 'silent',
      poolSize: 0,
      warmVcpus: [1],
      artifacts: 'on',
      ...store,
      // Node B's own snapshot directory: it has never seen the built-in template's snapshots.
      ...(ownSnapshots ? { snapshotDir: path.join(root, `${name}-snapshots`) } : {}),
    } as never);
    captureRoots.push(config.vm.vmSnapshotDir);
    return createEngine(engineOptions(config), pino({ level: 'silent' }));
  };
  const a = engineOf('node-a', false);
  const b = engineOf('node-b', true);
  const results: Record<string, number | string> = { store: String(store.objectStore) };
  const storageOf = (engine: SandboxEngine) => engine.storage as EngineArtifacts;
  try {
    await a.start();
    let n = 0;
    const acquire = async (engine: SandboxEngine) => {
      const vmId = `vm-benchan${(n++).toString().padStart(3, '0')}`;
      const [ms] = await timed(async () => {
        await engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 1800 });
        await engine.whenReady(vmId);
      });
      return { vmId, ms };
    };

    const restores: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const { vmId, ms } = await acquire(a);
      restores.push(ms);
      await a.kill(vmId);
    }
    results.restore_ms_p50 = Math.round(percentile(restores, 50));
    log(`plain restore on A p50 ${results.restore_ms_p50} ms`);

    // Template first use on B: its first VM fetches the built-in template's snapshot A made (and the image
    // files it builds on, which B has by content) instead of cold-booting it.
    await waitForVariantUpload(storageOf(a));
    const [firstUseMs, first] = await timed(async () => {
      await b.start();
      return acquire(b);
    });
    results.template_first_use_on_b_ms = Math.round(firstUseMs);
    log(`built-in template's first use on B (start + first VM): ${results.template_first_use_on_b_ms} ms`);
    await b.kill(first.vmId);

    // The VM: Python data, files and a background process.
    const source = await acquire(a);
    const agent = a.agent(source.vmId)!;
    await agent.runPython({ contextId: 'bench', code: 'data = [i * i for i in range(300000)]' });
    await shell(agent, 'dd if=/dev/urandom of=/root/state.bin bs=1M count=32 status=none && (setsid sleep 100000 >/dev/null 2>&1 &)');
    const vmId = source.vmId;
    let holder = a;
    const hits: number[] = [];
    const misses: number[] = [];
    const pauses: number[] = [];
    const uploads: { bytes: number; ms: number }[] = [];
    const downloads: { bytes: number; ms: number }[] = [];
    for (let i = 0; i < ROUNDS * 2; i++) {
      const [pauseMs] = await timed(() => holder.pause(vmId, { userId: 1 }));
      pauses.push(pauseMs);
      const manifest = await storageOf(holder).store.manifest({ kind: 'pause', id: vmId });
      uploads.push({ bytes: manifest!.dataBytes, ms: pauseMs });
      // Even rounds resume where it paused (hit), odd ones on the other node (miss).
      const target = i % 2 === 0 ? holder : holder === a ? b : a;
      const [resumeMs] = await timed(async () => {
        await target.resume({ vmId, lifetimeSeconds: 1800 });
        await target.whenReady(vmId);
      });
      (target === holder ? hits : misses).push(resumeMs);
      if (target !== holder) downloads.push({ bytes: manifest!.dataBytes, ms: resumeMs });
      holder = target;
    }
    await shell(holder.agent(vmId)!, 'test -s /root/state.bin && pgrep -x sleep >/dev/null');
    results.pause_ms_p50 = Math.round(percentile(pauses, 50));
    results.resume_hit_ms_p50 = Math.round(percentile(hits, 50));
    results.resume_miss_ms_p50 = Math.round(percentile(misses, 50));
    const rate = (moves: { bytes: number; ms: number }[]) =>
      Math.round((moves.reduce((sum, move) => sum + move.bytes, 0) / MIB / (moves.reduce((sum, move) => sum + move.ms, 0) / 1000)) * 10) / 10;
    results.pause_data_mib = Math.round(uploads[0]!.bytes / MIB);
    results.upload_mib_s = rate(uploads);
    results.download_mib_s = rate(downloads);
    log(
      `pause p50 ${results.pause_ms_p50} ms (upload included); resume on the same node (hit) p50 ${results.resume_hit_ms_p50} ms, on the other (miss) p50 ${results.resume_miss_ms_p50} ms; ` +
        `pause data ${results.pause_data_mib} MiB, upload ${results.upload_mib_s} MiB/s, download ${results.download_mib_s} MiB/s (pause and resume whole)`,
    );

    // Ten snapshots of the VM, a little written between each: what the store holds against what they would take.
    const before = await storageOf(holder).usage();
    for (let i = 0; i < 10; i++) {
      await shell(holder.agent(vmId)!, `dd if=/dev/urandom of=/root/step-${i}.bin bs=1M count=2 status=none`);
      await holder.snapshot(vmId, `snap_bench${i.toString().padStart(2, '0')}`, { userId: 1 });
    }
    await waitUntilStored(storageOf(holder), 10);
    const usage = await storageOf(holder).usage();
    const logical = usage.byKind.snapshot!.dataBytes;
    const stored = usage.chunks.bytes - before.chunks.bytes;
    results.ten_snapshots_data_mib = Math.round(logical / MIB);
    results.ten_snapshots_stored_mib = Math.round(stored / MIB);
    results.dedup_ratio = Math.round((logical / Math.max(1, stored)) * 10) / 10;
    log(`ten snapshots: ${results.ten_snapshots_data_mib} MiB of non-zero data, ${results.ten_snapshots_stored_mib} MiB stored (×${results.dedup_ratio})`);
    await holder.kill(vmId);
  } finally {
    await Promise.allSettled([a.close(), b.close()]);
    await s3?.stop();
    for (const dir of [root, ...captureRoots]) fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(results));
}

async function waitForVariantUpload(storage: EngineArtifacts): Promise<void> {
  for (let i = 0; i < 600; i++) {
    for await (const _ of storage.store.list('variant')) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the built-in template snapshot never reached the object store');
}

async function waitUntilStored(storage: EngineArtifacts, count: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    let found = 0;
    for await (const _ of storage.store.list('snapshot')) found += 1;
    if (found >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the snapshots never all reached the object store');
}

await main();
