/**
 * Density benchmark (issue 35): how many idle 512 MiB, 1-vCPU VMs of the built-in template this host runs at once.
 * Through the engine (no pool, no HTTP) it restores them one after another, so that each restore time is clean,
 * until the host's memory floor refuses the next one (HOST_MEMORY_LOW: the normal end; SANDBOXD_MIN_FREE_MEMORY_MB
 * sets the floor), a restore fails (a host whose CPU runs out first: `ended_by: restore_failed`) or BENCH_DENSITY_MAX
 * (default 400) run. It reports a restore's time with 1, 50 and that many VMs
 * running, what each VM costs the host in memory (PSS, where the snapshot pages they share count once; private; RSS
 * for comparison) and in CPU once they idle, and ends with one JSON line. `npm run bench:density`.
 *
 * Every VM it started is killed at the end, also after an error or a Ctrl-C (a second Ctrl-C leaves at once: the
 * next run's engine start then reaps what is left, its first step kills what that engine re-adopted).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { engineOptions, loadConfig } from '../packages/server/src/config/index.ts';
import { AppError } from '../packages/server/src/core/errors.ts';
import { memAvailableMb } from '../packages/server/src/engine/host-memory.ts';
import { createEngine } from '../packages/server/src/engine/index.ts';
import type { SandboxEngine } from '../packages/server/src/engine/sandbox-engine.ts';
import { percentile } from './first-result.ts';
import { cpuTicks, HZ, memoryOf, qemuPids } from './qemu-usage.ts';

const MAX_VMS = Number(process.env.BENCH_DENSITY_MAX ?? 400);
/** The 50th VM's restore is reported when the run gets that far. */
const MIDDLE_COUNT = 50;
/**
 * Each reported restore time is the p50 of a few samples. At 1 and 50 VMs: the restore that reached the count, then
 * this many replacements of it (the newest VM killed and a new one restored in its place, the same number of others
 * running): three extra restores per count keep it cheap. At the most VMs: the last this-many-plus-one restores
 * that raised the count (max-3 .. max) and no extra one, since the run ends there because the memory floor refuses
 * one more (a replacement too: the first trial's was refused, the killed VM's memory giving back just the margin).
 */
const EXTRA_SAMPLES = 3;
/** A restored guest still catches up for its first ~15 s (bench/engine.ts measured 2-3x the CPU of later). */
const SETTLE_MS = 20_000;
const CPU_WINDOW_MS = 10_000;
/** Longer than any run: the bench kills its VMs itself, their deadline must not do it midway. */
const LIFETIME_SECONDS = 24 * 3600;
/** Kills under way at once during the clean-up (each is a SIGKILL and a wait for the run directory to go). */
const KILL_CONCURRENCY = 16;
const VM_MEMORY_MB = 512;

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
/** 18200 → "18 200", as the progress lines read. */
const grouped = (n: number) =>
  Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
const round = (n: number, decimals: number) => Math.round(n * 10 ** decimals) / 10 ** decimals;

/** The host's MemAvailable, MiB (NaN if the kernel does not report it). */
function hostAvailableMib(): number {
  return memAvailableMb(fs.readFileSync('/proc/meminfo', 'utf8')) ?? Number.NaN;
}

function isMemoryFloor(error: unknown): error is AppError {
  return error instanceof AppError && error.code === 'HOST_MEMORY_LOW';
}

/** Kills `vmIds` through the engine, KILL_CONCURRENCY at a time; failures are logged, not thrown. */
async function killAll(engine: SandboxEngine, vmIds: string[]): Promise<void> {
  const queue = [...vmIds];
  await Promise.all(
    Array.from({ length: KILL_CONCURRENCY }, async () => {
      for (let vmId = queue.shift(); vmId !== undefined; vmId = queue.shift()) {
        await engine.kill(vmId).catch((error: Error) => log(`killing ${vmId}: ${error.message}`));
      }
    }),
  );
}

/** The run itself: its figures into `results`, the bench's VMs in `live` (oldest first) for the caller to kill. */
async function measure(engine: SandboxEngine, runDir: string, live: string[], results: Record<string, unknown>, signal: AbortSignal): Promise<void> {
  let n = 0;
  /** One VM restored and ready (acquire + whenReady), in ms. */
  const restore = async (): Promise<number> => {
    const vmId = `vm-density${(n++).toString().padStart(4, '0')}`;
    const start = performance.now();
    await engine.acquire({ vmId, vcpuCount: 1, memoryMb: VM_MEMORY_MB, lifetimeSeconds: LIFETIME_SECONDS });
    live.push(vmId);
    await engine.whenReady(vmId);
    return performance.now() - start;
  };
  /** The restore that reached this count and EXTRA_SAMPLES replacements of it (fewer if the floor refuses one). */
  const samplesAt = async (firstMs: number): Promise<number[]> => {
    const samples = [firstMs];
    for (let i = 0; i < EXTRA_SAMPLES && !signal.aborted; i++) {
      await engine.kill(live.pop()!);
      try {
        samples.push(await restore());
      } catch (error) {
        if (!isMemoryFloor(error)) throw error;
        log(`the memory floor refused a replacement restore at ${live.length + 1} VMs: ${samples.length} sample(s) there`);
        break;
      }
    }
    return samples;
  };

  results.host_mem_available_mib_start = Math.round(hostAvailableMib());
  let vmsMax = 0;
  let lastMs = Number.NaN;
  /** The times of the restores that raised the count to a new high, in order. */
  const climbs: number[] = [];
  let atFirst: number[] | undefined;
  let atMiddle: number[] | undefined;
  let endedBy: 'max' | 'memory_floor' | 'restore_failed' = 'max';
  while (live.length < MAX_VMS && !signal.aborted) {
    try {
      lastMs = await restore();
    } catch (error) {
      if (isMemoryFloor(error)) {
        endedBy = 'memory_floor';
        log(`the memory floor refused VM ${live.length + 1}: ${error.message}`);
        break;
      }
      // With many VMs running, the host's CPU can run out before its memory: their idle CPU adds up, and a
      // restore that no longer finishes within the engine's deadlines ends the climb there (reported, not thrown).
      if (live.length < 2 || signal.aborted) throw error;
      endedBy = 'restore_failed';
      log(`VM ${live.length + 1} could not be restored, the climb ends at ${live.length}: ${(error as Error).message}`);
      break;
    }
    if (live.length > vmsMax) climbs.push(lastMs);
    vmsMax = Math.max(vmsMax, live.length);
    if (live.length === 1 && !atFirst) atFirst = await samplesAt(lastMs);
    if (live.length === MIDDLE_COUNT && !atMiddle) atMiddle = await samplesAt(lastMs);
    if (live.length % 10 === 0) log(`${live.length} VMs, MemAvailable ${grouped(hostAvailableMib())} MiB, last restore ${Math.round(lastMs)} ms`);
  }
  if (signal.aborted) return;
  if (live.length === 0) throw new Error(`no VM ran: the host has ${grouped(hostAvailableMib())} MiB available, under the memory floor`);
  const atMax = vmsMax === 1 ? atFirst! : climbs.slice(-(EXTRA_SAMPLES + 1));
  results.vms_max = vmsMax;
  results.ended_by = endedBy;
  results.restore_ms_at_1 = percentile(atFirst!, 50);
  results.restore_ms_at_50 = atMiddle ? percentile(atMiddle, 50) : null;
  results.restore_ms_at_max = percentile(atMax, 50);
  log(
    `${vmsMax} VMs at most (${{ max: 'BENCH_DENSITY_MAX', memory_floor: 'the memory floor ended it', restore_failed: 'a restore failed' }[endedBy]}); restore p50 at 1: ${results.restore_ms_at_1} ms, ` +
      `at ${MIDDLE_COUNT}: ${results.restore_ms_at_50 ?? '-'} ms, at ${vmsMax}: ${results.restore_ms_at_max} ms (samples ${atMax.map(Math.round).join(', ')})`,
  );

  log(`${live.length} VMs settle for ${SETTLE_MS / 1000} s`);
  await sleep(SETTLE_MS, undefined, { signal });
  const pids = qemuPids(runDir);
  if (pids.length !== live.length) log(`${pids.length} QEMU processes for ${live.length} VMs of this bench`);
  const memory = pids.map(memoryOf).filter((m) => m !== undefined);
  const perVmMib = (kib: number) => round(kib / 1024 / memory.length, 1);
  results.host_pss_mib_per_vm = perVmMib(memory.reduce((sum, m) => sum + m.pssKib, 0));
  results.private_mib_per_vm = perVmMib(memory.reduce((sum, m) => sum + m.privateKib, 0));
  results.rss_mib_per_vm = perVmMib(memory.reduce((sum, m) => sum + m.rssKib, 0));
  log(`per VM: PSS ${results.host_pss_mib_per_vm} MiB, private ${results.private_mib_per_vm} MiB, RSS ${results.rss_mib_per_vm} MiB`);

  const before = pids.map(cpuTicks);
  await sleep(CPU_WINDOW_MS, undefined, { signal });
  let ticks = 0;
  let counted = 0;
  pids.map(cpuTicks).forEach((after, i) => {
    if (after === undefined || before[i] === undefined) return; // ended within the window
    ticks += after - before[i];
    counted += 1;
  });
  results.idle_cpu_pct_per_vm = round((ticks / HZ / counted / (CPU_WINDOW_MS / 1000)) * 100, 2);
  results.host_mem_available_mib_end = Math.round(hostAvailableMib());
  log(
    `idle: ${results.idle_cpu_pct_per_vm} % of a core per VM over ${CPU_WINDOW_MS / 1000} s; MemAvailable ${grouped(Number(results.host_mem_available_mib_end))} MiB`,
  );
}

async function main(): Promise<number> {
  if (!Number.isInteger(MAX_VMS) || MAX_VMS < 1) throw new Error(`BENCH_DENSITY_MAX must be a positive integer (got ${process.env.BENCH_DENSITY_MAX})`);
  // One data directory for every run (hence one run root): what an interrupted run left is the next run's to end.
  const dataDir = path.join(os.tmpdir(), 'sandboxd-bench-density');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const config = loadConfig(process.env, { dataDir, logLevel: 'silent', poolSize: 0, warmVcpus: [1], keepVmsOnShutdown: false });
  const engine = createEngine(engineOptions(config), pino({ level: 'silent' }));
  const results: Record<string, unknown> = { min_free_memory_mb: config.vm.minFreeMemoryMb };
  const live: string[] = [];
  engine.events.once('ready', ({ host }) => (results.accel = host.accelerator));
  engine.events.on('warning', ({ code, message }) => log(`engine warning ${code}: ${message}`));
  engine.onVmEnded((vmId, reason) => {
    const index = live.indexOf(vmId);
    if (index >= 0) live.splice(index, 1);
    log(`VM ${vmId} ended by itself (${reason})`);
  });

  const stop = new AbortController();
  let interrupts = 0;
  process.on('SIGINT', () => {
    if (++interrupts > 1) {
      log('leaving now; the next run ends the VMs left');
      process.exit(130);
    }
    log('interrupted: ending the VMs (Ctrl-C again to leave at once)');
    stop.abort();
  });

  let failed: unknown;
  try {
    await engine.start();
    // VMs of an earlier run that could not end them, re-adopted by this engine's start (they are within their lifetime).
    const leftovers = engine.liveVmIds();
    if (leftovers.length > 0) {
      log(`ending ${leftovers.length} VMs an earlier run left`);
      await killAll(engine, leftovers);
    }
    log(`accelerator ${String(results.accel)}, memory floor ${config.vm.minFreeMemoryMb} MiB, at most ${MAX_VMS} VMs`);
    await measure(engine, config.vm.runDir, live, results, stop.signal);
  } catch (error) {
    if (!stop.signal.aborted) failed = error;
  } finally {
    log(`ending ${live.length} VMs`);
    await killAll(engine, live);
    await engine.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  if (failed !== undefined) throw failed;
  if (stop.signal.aborted) return 130;

  const order = [
    'accel',
    'vms_max',
    'ended_by',
    'restore_ms_at_1',
    'restore_ms_at_50',
    'restore_ms_at_max',
    'host_pss_mib_per_vm',
    'private_mib_per_vm',
    'rss_mib_per_vm',
    'idle_cpu_pct_per_vm',
    'host_mem_available_mib_start',
    'host_mem_available_mib_end',
    'min_free_memory_mb',
  ];
  process.stdout.write(`${JSON.stringify(Object.fromEntries(order.map((k) => [k, results[k]])))}\n`);
  return 0;
}

process.exitCode = await main();
