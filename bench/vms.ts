/**
 * VM benchmark (issue 16): snapshot of a running 512 MiB VM (how long the guest is stopped, how long it takes,
 * what it costs on disk), clone, pause and resume, 10 clones of one snapshot at once, and a snapshot's disk cost
 * against what the VM wrote since its parent; each time beside a plain restore measured in the same run. Through
 * the engine (no HTTP), on whatever accelerator the machine has. `npm run bench:vms`; ends with one JSON line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { engineOptions, loadConfig } from '../packages/server/src/config/index.ts';
import type { CaptureOutcome, GuestAgent } from '../packages/server/src/core/vm-engine.ts';
import { createEngine } from '../packages/server/src/engine/index.ts';
import { percentile } from './first-result.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const log = (message: string) => process.stderr.write(`[bench:vms] ${message}\n`);
const MIB = 2 ** 20;

const signed = (n: number) => (n >= 0 ? `+${n}` : `${n}`);

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
  const dataDir = path.join(os.tmpdir(), 'sandboxd-bench-vms');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const config = loadConfig(process.env, { dataDir, logLevel: 'silent', poolSize: 0, warmVcpus: [1] });
  fs.rmSync(config.vm.vmSnapshotDir, { recursive: true, force: true });
  const engine = createEngine(engineOptions(config), pino({ level: 'silent' }));
  const results: Record<string, number | string> = {};
  engine.events.once('ready', ({ host }) => (results.accel = host.accelerator));
  await engine.start();
  let n = 0;
  const nextId = () => `vm-benchv${(n++).toString().padStart(3, '0')}`;
  const acquire = async (snapshotId?: string, diskSizeMb = 0) => {
    const vmId = nextId();
    const [ms] = await timed(async () => {
      await engine.acquire({
        vmId,
        vcpuCount: 1,
        memoryMb: 512,
        lifetimeSeconds: 1200,
        ...(snapshotId ? { source: { kind: 'snapshot', snapshotId, diskSizeMb } } : {}),
      });
      await engine.whenReady(vmId);
    });
    return { vmId, ms };
  };

  // The yardstick: a plain restore of the built-in template (empty pool), until the VM has its identity.
  const restores: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const { vmId, ms } = await acquire();
    restores.push(ms);
    await engine.kill(vmId);
  }
  const restoreP50 = percentile(restores, 50);
  results.restore_ms_p50 = restoreP50;
  log(`plain restore p50 ${restoreP50} ms [${restores.map(Math.round).join(', ')}]`);

  // A running 512 MiB VM with some state: Python with data, files, a process.
  const source = await acquire();
  const agent = engine.agent(source.vmId)!;
  await agent.runPython({ contextId: 'bench', code: 'data = [i * i for i in range(200000)]' });
  await shell(agent, 'dd if=/dev/urandom of=/root/before.bin bs=1M count=8 status=none && (setsid sleep 100000 >/dev/null 2>&1 &)');

  const snapshots: CaptureOutcome[] = [];
  const snapshotIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = `snap_bench${i}`;
    snapshots.push(await engine.snapshot(source.vmId, id));
    snapshotIds.push(id);
  }
  results.snapshot_pause_ms_p50 = percentile(
    snapshots.map((s) => s.pausedMs),
    50,
  );
  results.snapshot_done_ms_p50 = percentile(
    snapshots.map((s) => s.durationMs),
    50,
  );
  results.snapshot_memory_mib = Math.round((snapshots[0]!.memoryBytes / MIB) * 10) / 10;
  log(
    `snapshot of the running VM: guest stopped p50 ${results.snapshot_pause_ms_p50} ms, done p50 ${results.snapshot_done_ms_p50} ms [${snapshots.map((s) => `${s.pausedMs}/${s.durationMs}`).join(', ')}]; memory file ${results.snapshot_memory_mib} MiB`,
  );

  // Disk cost: only what changed since the parent. 32 MiB written, then a snapshot; then one with nothing written.
  await shell(agent, 'dd if=/dev/urandom of=/root/layer.bin bs=1M count=32 status=none && sync');
  const written = await engine.snapshot(source.vmId, 'snap_benchw');
  const idle = await engine.snapshot(source.vmId, 'snap_benchi');
  snapshotIds.push('snap_benchw', 'snap_benchi');
  results.snapshot_disk_mib_after_32mib_written = Math.round((written.diskBytes / MIB) * 10) / 10;
  results.snapshot_disk_mib_nothing_written = Math.round((idle.diskBytes / MIB) * 10) / 10;
  log(
    `disk layer: ${results.snapshot_disk_mib_after_32mib_written} MiB after 32 MiB written, ${results.snapshot_disk_mib_nothing_written} MiB with nothing written`,
  );

  // Clones of one snapshot, one at a time, then ten at once.
  const cloneOf = snapshotIds[0]!;
  const diskSizeMb = snapshots[0]!.diskSizeMb;
  const clones: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const { vmId, ms } = await acquire(cloneOf, diskSizeMb);
    clones.push(ms);
    await engine.kill(vmId);
  }
  const cloneP50 = percentile(clones, 50);
  results.clone_ms_p50 = cloneP50;
  results.clone_vs_restore_ms = Math.round(cloneP50 - restoreP50);
  log(`clone p50 ${cloneP50} ms (${signed(Number(results.clone_vs_restore_ms))} ms against a restore) [${clones.map(Math.round).join(', ')}]`);
  const [tenMs, ten] = await timed(() => Promise.all(Array.from({ length: 10 }, () => acquire(cloneOf, diskSizeMb))));
  results.clones10_ready_ms = Math.round(tenMs);
  results.clones10_p50_ms = percentile(
    ten.map((c) => c.ms),
    50,
  );
  log(`10 clones at once: all ready in ${results.clones10_ready_ms} ms (each p50 ${results.clones10_p50_ms} ms)`);
  for (const c of ten) await engine.kill(c.vmId);

  // Pause and resume, same VM each round.
  const pauses: number[] = [];
  const resumes: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const paused = await engine.pause(source.vmId);
    pauses.push(paused.durationMs);
    const [ms] = await timed(async () => {
      await engine.resume({ vmId: source.vmId, lifetimeSeconds: 1200 });
      await engine.whenReady(source.vmId);
    });
    resumes.push(ms);
  }
  const check = await engine.agent(source.vmId)!.runPython({ contextId: 'bench', code: 'print(len(data))' });
  if (check.stdout.trim() !== '200000') throw new Error(`the resumed VM lost its state: ${check.stdout} ${check.stderr}`);
  const resumeP50 = percentile(resumes, 50);
  results.pause_ms_p50 = percentile(pauses, 50);
  results.resume_ms_p50 = resumeP50;
  results.resume_vs_restore_ms = Math.round(resumeP50 - restoreP50);
  log(
    `pause p50 ${results.pause_ms_p50} ms [${pauses.map(Math.round).join(', ')}]; resume p50 ${resumeP50} ms (${signed(Number(results.resume_vs_restore_ms))} ms against a restore) [${resumes.map(Math.round).join(', ')}]`,
  );

  await engine.kill(source.vmId);
  for (const id of snapshotIds) await engine.deleteSnapshot(id);
  await engine.close();
  fs.rmSync(config.vm.vmSnapshotDir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

await main();
