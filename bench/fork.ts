/**
 * Fork fan-out benchmark (issue 38): one running 512 MiB, 1-vCPU VM with some state (a Python variable holding
 * data, a file, a background process) forked into FORK_COUNT (default 100) VMs by one
 * `POST /v1/vms/{vm_id}/clone` through a real server on loopback. It reports the time until the call answers
 * with every clone ready, each clone's own start (its record's reservation to its restore: `created_at` →
 * `started_at`, waiting for a restore slot included) and when each was up counted from the call, p50/p95, and what
 * the host paid in memory: MemAvailable before the fork and once the clones settled, and the sum of the QEMU
 * processes' PSS (/proc/<pid>/smaps_rollup; pages of the snapshot's memory file that the clones share count once
 * between them), with the parent's alone for comparison. Every clone is checked to hold the parent's variable.
 * Then everything is killed and removed. `npm run bench:fork`; `FORK_COUNT=20 npm run bench:fork` for fewer;
 * `SANDBOXD_FORK_CONCURRENCY` sets how many clones start at once (default twice the CPU count). Ends with one
 * JSON line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../packages/server/src/app.ts';
import { loadConfig } from '../packages/server/src/config/index.ts';
import { DEFAULT_PLANS, MAX_FORK_COUNT } from '../packages/server/src/core/plans.ts';
import { memAvailableMb } from '../packages/server/src/engine/host-memory.ts';
import { percentile } from './first-result.ts';
import { memoryOf, qemuPids } from './qemu-usage.ts';

const FORK_COUNT = Number(process.env.FORK_COUNT ?? 100);
const VM_MEMORY_MB = 512;
/** The clones idle this long before their memory is read (a restored guest settles for its first ~15 s). */
const SETTLE_MS = 20_000;
/** Executes (the state check) and kills under way at once. */
const CHECK_CONCURRENCY = 4;
const KILL_CONCURRENCY = 16;

const log = (message: string) => process.stderr.write(`[bench:fork] ${message}\n`);
const hostAvailableMib = () => memAvailableMb(fs.readFileSync('/proc/meminfo', 'utf8')) ?? Number.NaN;
const round = (n: number, decimals = 0) => Math.round(n * 10 ** decimals) / 10 ** decimals;

/** Runs `work` over `items`, `limit` at a time; failures are logged, not thrown. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item).catch((error: Error) => log(error.message));
    }),
  );
}

/** The QEMU PSS of these pids together, MiB. */
function pssMib(pids: number[]): number {
  return round(pids.map(memoryOf).reduce((sum, m) => sum + (m?.pssKib ?? 0), 0) / 1024, 1);
}

async function main(): Promise<number> {
  if (!Number.isInteger(FORK_COUNT) || FORK_COUNT < 1 || FORK_COUNT > MAX_FORK_COUNT)
    throw new Error(`FORK_COUNT must be from 1 to ${MAX_FORK_COUNT} (got ${process.env.FORK_COUNT})`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-fork-'));
  const bench = { ...DEFAULT_PLANS.enterprise!, maxConcurrentVms: FORK_COUNT + 1, maxTotalVcpus: FORK_COUNT + 1, maxForkCount: FORK_COUNT };
  const config = loadConfig(process.env, {
    dataDir,
    host: '127.0.0.1',
    port: 0,
    logLevel: 'silent',
    poolSize: 0,
    poolMax: 0,
    warmVcpus: [1],
    keepVmsOnShutdown: false,
    adminListen: 'off',
    internalListen: 'off',
    sshListen: 'off',
    plans: { ...DEFAULT_PLANS, bench },
  });
  const { app, services } = await buildApp({ config, logger: false });
  const results: Record<string, unknown> = {
    fork_count: FORK_COUNT,
    fork_concurrency: config.vm.forkConcurrency,
    min_free_memory_mb: config.vm.minFreeMemoryMb,
  };
  const vmIds: string[] = [];
  let apiKey = '';
  let base = '';
  const request = async <T = Record<string, unknown>>(method: string, url: string, body?: unknown): Promise<T> => {
    const response = await fetch(base + url, {
      method,
      headers: { 'x-api-key': apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${url}: HTTP ${response.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  let failed: unknown;
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('no TCP address');
    base = `http://127.0.0.1:${address.port}`;
    await services.sandbox.vms.start();
    const user = await services.users.create({
      username: `bench-${randomBytes(3).toString('hex')}`,
      password: randomBytes(18).toString('base64url'),
      plan: 'bench',
    });
    apiKey = (await services.apiKeys.create(user.id, { description: 'fork benchmark' })).fullKey;

    // The parent: a 512 MiB VM whose Python holds ~20 MiB of data, with a file and a background process.
    const session = await request<{ session_id: string }>('POST', '/v1/sessions/session', {
      vcpu_count: 1,
      memory_mb: VM_MEMORY_MB,
      vm_lifetime_seconds: 3600,
    });
    const execute = async (sessionId: string, body: Record<string, unknown>) => {
      const answer = await request<{ exit_code: number; stdout: string; stderr: string }>('POST', '/execute', { session_id: sessionId, timeout: 300, ...body });
      if (answer.exit_code !== 0) throw new Error(`execute in ${sessionId}: exit ${answer.exit_code}: ${answer.stderr}`);
      return String(answer.stdout).trim();
    };
    await execute(session.session_id, { code: 'data = [i * i for i in range(500_000)]\nmarker = "parent"\nprint(len(data))' });
    await execute(session.session_id, {
      language: 'bash',
      command: 'head -c 8M /dev/urandom > /root/state.bin && (setsid sleep 100000 >/dev/null 2>&1 < /dev/null &)',
    });
    const parent = (await request<{ vm_id: string }>('GET', `/v1/sessions/status/${session.session_id}`)).vm_id;
    vmIds.push(parent);
    await sleep(SETTLE_MS);
    const parentPids = qemuPids(config.vm.runDir);
    results.parent_pss_mib = pssMib(parentPids);
    results.host_mem_available_mib_before = round(hostAvailableMib());
    log(
      `parent ${parent} ready: PSS ${results.parent_pss_mib} MiB; MemAvailable ${results.host_mem_available_mib_before} MiB; forking into ${FORK_COUNT}, ${config.vm.forkConcurrency} at a time`,
    );

    const started = Date.now();
    let forked: {
      snapshot: { pause_ms: number; duration_ms: number };
      clones: { vm_id: string; session_id: string; created_at: string; started_at: string }[];
    };
    try {
      forked = await request<typeof forked>('POST', `/v1/vms/${parent}/clone`, { count: FORK_COUNT });
    } catch (error) {
      results.fork_error = (error as Error).message;
      results.host_mem_available_mib_at_failure = round(hostAvailableMib());
      throw error;
    }
    const allReadyMs = Date.now() - started;
    const clones = forked.clones;
    vmIds.push(...clones.map((c) => c.vm_id));
    results.all_ready_ms = allReadyMs;
    const ownStart = clones.map((c) => Date.parse(c.started_at) - Date.parse(c.created_at));
    const upAfter = clones.map((c) => Date.parse(c.started_at) - started);
    results.clone_start_ms_p50 = percentile(ownStart, 50);
    results.clone_start_ms_p95 = percentile(ownStart, 95);
    results.clone_up_after_ms_p50 = percentile(upAfter, 50);
    results.clone_up_after_ms_p95 = percentile(upAfter, 95);
    results.snapshot_pause_ms = forked.snapshot.pause_ms;
    results.snapshot_duration_ms = forked.snapshot.duration_ms;
    log(
      `${clones.length} clones ready in ${allReadyMs} ms; each clone's own start p50 ${results.clone_start_ms_p50} ms, p95 ${results.clone_start_ms_p95} ms; ` +
        `up after p50 ${results.clone_up_after_ms_p50} ms, p95 ${results.clone_up_after_ms_p95} ms (the snapshot took ${forked.snapshot.duration_ms} ms, the parent stopped ${forked.snapshot.pause_ms} ms)`,
    );

    log(`clones settle for ${SETTLE_MS / 1000} s`);
    await sleep(SETTLE_MS);
    const pids = qemuPids(config.vm.runDir);
    results.qemu_processes = pids.length;
    results.qemu_pss_mib_total = pssMib(pids);
    results.qemu_pss_mib_per_clone = round((Number(results.qemu_pss_mib_total) - Number(results.parent_pss_mib)) / clones.length, 1);
    results.qemu_rss_mib_total = round(pids.map(memoryOf).reduce((sum, m) => sum + (m?.rssKib ?? 0), 0) / 1024);
    results.host_mem_available_mib_after = round(hostAvailableMib());
    results.host_mem_used_mib = round(Number(results.host_mem_available_mib_before) - Number(results.host_mem_available_mib_after));
    log(
      `${pids.length} QEMU processes: PSS ${results.qemu_pss_mib_total} MiB together (${results.qemu_pss_mib_per_clone} MiB a clone), RSS ${results.qemu_rss_mib_total} MiB; ` +
        `MemAvailable ${results.host_mem_available_mib_before} → ${results.host_mem_available_mib_after} MiB (${results.host_mem_used_mib} MiB used)`,
    );

    // Every clone holds the parent's state.
    let holding = 0;
    await eachLimited(clones, CHECK_CONCURRENCY, async (clone) => {
      const answer = await execute(clone.session_id, { code: 'print(marker, len(data))' });
      if (answer === 'parent 500000') holding += 1;
      else log(`clone ${clone.vm_id} answered ${answer}`);
    });
    results.clones_holding_state = holding;
    log(`${holding} of ${clones.length} clones hold the parent's state`);
  } catch (error) {
    failed = error;
  } finally {
    log(`ending ${vmIds.length} VMs`);
    await eachLimited(vmIds.slice().reverse(), KILL_CONCURRENCY, async (vmId) => void (await request('DELETE', `/v1/vms/${vmId}`)));
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(config.vm.vmSnapshotDir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
  if (failed !== undefined) {
    log(`failed: ${(failed as Error).message}`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
