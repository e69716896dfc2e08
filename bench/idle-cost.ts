/**
 * Idle-cost benchmark (issue 35): what one setting does to an idle VM's host memory and CPU, and what it costs the
 * work a VM does, measured alone. It restores BENCH_IDLE_VMS (default 8) 512 MiB, 1-vCPU VMs of the built-in
 * template through the engine (no pool, no HTTP), times in the first of them the first Python run after its
 * restore, an `echo`, a `bash -c` and a code-heavy cold start (a Python that imports a dozen standard modules, run
 * twice: the first pays for translating that code, the second shows what the translation cache kept), follows
 * that VM's private memory while a process in it writes 256 MiB and exits (what the guest gave back: kept by the
 * VM unless its free pages are reported), then lets the others settle and reports their private memory, the part
 * of it that is TCG's translated-code cache, and their CPU while idle. Ends with one JSON line. Run it once per value of the setting under study, e.g.
 * `SANDBOXD_TCG_CACHE_MB=64 npm run bench:idle`.
 *
 * Every VM it started is killed at the end, also after an error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { engineOptions, loadConfig } from '../packages/server/src/config/index.ts';
import { createEngine } from '../packages/server/src/engine/index.ts';
import { percentile } from './first-result.ts';
import { idleCpuWindows, memoryOf, qemuPids, tcgCodeCacheKib } from './qemu-usage.ts';

const VMS = Number(process.env.BENCH_IDLE_VMS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
/** A restored guest still catches up for its first ~15 s (bench/engine.ts measured 2-3x the CPU of later). */
const SETTLE_MS = 20_000;
const IMPORTS = 'import asyncio, json, email.parser, http.client, xml.dom.minidom, sqlite3, decimal, unittest, argparse, csv, tarfile, logging';

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const round = (n: number, decimals = 1) => Math.round(n * 10 ** decimals) / 10 ** decimals;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function main(): Promise<void> {
  const dataDir = path.join(os.tmpdir(), 'sandboxd-bench-idle');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const config = loadConfig(process.env, { dataDir, logLevel: 'silent', poolSize: 0, poolMax: 0, warmVcpus: [1] });
  const engine = createEngine(engineOptions(config), pino({ level: 'silent' }));
  const results: Record<string, unknown> = { tcg_cache_mb: config.vm.tcgCacheMb, vms: VMS };
  const ids = Array.from({ length: VMS }, (_, i) => `vm-idle${i.toString().padStart(3, '0')}`);
  const started: string[] = [];
  try {
    const ready = new Promise<{ accelerator: string }>((resolve) => engine.events.once('ready', ({ host }) => resolve(host)));
    await engine.start();
    const host = await ready;
    results.accel = host.accelerator;
    log(`accelerator ${host.accelerator}, tb-size ${config.vm.tcgCacheMb} MiB, ${VMS} VMs`);
    const restores: number[] = [];
    /** The first VM's QEMU (the one that runs the commands): the only one after the first restore. */
    let pid0 = Number.NaN;
    for (const vmId of ids) {
      restores.push(
        await timed(async () => {
          await engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 3600 });
          started.push(vmId);
          await engine.whenReady(vmId);
        }),
      );
      if (vmId === ids[0]) [pid0] = qemuPids(config.vm.runDir) as [number];
    }
    results.restore_ms_p50 = Math.round(percentile(restores, 50));
    log(`restore p50 ${results.restore_ms_p50} ms`);

    const agent = engine.agent(ids[0]!)!;
    const sink = { onStdout: () => {}, onStderr: () => {} };
    results.python_first_run_ms = Math.round(await timed(() => agent.runPython({ contextId: 'bench', code: '1+1' })));
    const echo: number[] = [];
    const bash: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      echo.push(await timed(() => agent.exec({ argv: ['echo', 'hi'] }, sink)));
      // A pause, so that the agent's spare shell taken by the previous command has been replaced.
      await new Promise((r) => setTimeout(r, 500));
      bash.push(await timed(() => agent.exec({ command: 'echo hi', shell: ['/bin/bash', '-c'], env: {}, cwd: '/root' }, sink)));
    }
    results.exec_echo_ms_p50 = Math.round(percentile(echo, 50));
    results.exec_bash_c_ms_p50 = Math.round(percentile(bash, 50));
    results.python_imports_first_ms = Math.round(await timed(() => agent.exec({ argv: ['python3', '-c', IMPORTS] }, sink)));
    results.python_imports_again_ms = Math.round(await timed(() => agent.exec({ argv: ['python3', '-c', IMPORTS] }, sink)));
    log(
      `first Python run ${results.python_first_run_ms} ms; echo p50 ${results.exec_echo_ms_p50} ms; bash -c p50 ${results.exec_bash_c_ms_p50} ms; ` +
        `python3 with imports ${results.python_imports_first_ms} ms, again ${results.python_imports_again_ms} ms`,
    );

    // Memory the guest used and gave back: a process writes 256 MiB and exits. Its pages become the VM's own
    // (copied from the snapshot's file as they were written) and stay so unless the guest reports them free.
    const privateMib = () => round((memoryOf(pid0)?.privateKib ?? Number.NaN) / 1024);
    const beforeWorkload = privateMib();
    await agent.exec({ argv: ['python3', '-c', "b = b'x' * (256 << 20)"] }, sink);
    const afterWorkload = privateMib();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    results.freed_256mib_private_mib = { before: beforeWorkload, after: afterWorkload, settled: privateMib() };
    log(
      `VM that wrote 256 MiB and freed them: private ${beforeWorkload} MiB before, ${afterWorkload} MiB after, ${privateMib()} MiB ${SETTLE_MS / 1000} s later`,
    );

    const pids = qemuPids(config.vm.runDir).filter((pid) => pid !== pid0);
    const mean = (values: number[]) => round(values.reduce((s, v) => s + v, 0) / values.length);
    results.idle_private_mib = mean(pids.map((pid) => (memoryOf(pid)?.privateKib ?? Number.NaN) / 1024));
    results.idle_tcg_code_mib = host.accelerator === 'tcg' ? mean(pids.map((pid) => (tcgCodeCacheKib(pid, config.vm.tcgCacheMb) ?? Number.NaN) / 1024)) : 0;
    const windows = await idleCpuWindows(pids, 3, 10_000);
    log(`idle CPU per 10 s window: ${windows.join(', ')} % of a core per VM`);
    results.idle_cpu_pct = windows.at(-1)!;
    results.idle_vms_measured = pids.length;
    log(`idle VM: ${results.idle_private_mib} MiB private (translated code ${results.idle_tcg_code_mib} MiB), ${results.idle_cpu_pct} % of a core`);
  } finally {
    for (const vmId of started) await engine.kill(vmId).catch((error) => log(`kill ${vmId}: ${(error as Error).message}`));
    await engine.close();
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

await main();
