/**
 * What a runaway VM costs the host, A/B in one run: one cold-booted 2-vCPU guest busy-looping on both vCPUs,
 * while a stand-in server (a Node HTTP server in its own process, beside the VMs' parent cgroup as sandboxd
 * itself is) answers /healthz every 50 ms and, once per window, another host process does a fixed amount of
 * CPU work. Each window sets the
 * VM's cap (and its parent's weight) directly in its cgroup, so every variant runs against the same guest;
 * variants alternate over the rounds so that other load on the host falls on all of them. Prints one JSON line
 * per window and the medians. Needs root (cgroups). `npm run bench:vm-cpu`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentClient } from '../packages/server/src/agent/index.ts';
import { AGENT_BUNDLE_PATH } from '../packages/server/src/engine/index.ts';
import { defaultCacheDir, ensureGuestImage } from '../packages/server/src/image/index.ts';
import { agentClientProbe } from '../packages/server/src/vm/agent-client-probe.ts';
import { cpuQuotaUs } from '../packages/server/src/vm/qemu/cgroup.ts';
import { QemuDriver } from '../packages/server/src/vm/qemu/qemu-driver.ts';
import type { VmStateFile } from '../packages/server/src/vm/qemu/run-dir.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 10_000);
const PARENT = 'sandboxd-bench-cpu';
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** The stand-in server: /healthz, and /delay (its event-loop delay since the last call). */
const SERVER = `
const http = require('node:http');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const delay = monitorEventLoopDelay({ resolution: 5 }); delay.enable();
http.createServer((req, res) => {
  if (req.url === '/delay') {
    res.end(JSON.stringify({ p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6 }));
    delay.reset();
  } else res.end('ok');
}).listen(0, '127.0.0.1', function () { process.stdout.write(JSON.stringify({ port: this.address().port }) + '\\n'); });
`;

/** A host process doing a fixed amount of CPU work (hashing 1.2 GB): the share of a CPU it got, CPU time / wall time. */
const WORK = `
const { createHash } = require('node:crypto');
const buf = Buffer.alloc(1 << 20, 7);
const t0 = performance.now(); const c0 = process.cpuUsage();
for (let i = 0; i < 1200; i++) createHash('sha256').update(buf).digest();
const c = process.cpuUsage(c0);
process.stdout.write(JSON.stringify({ wallMs: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 }));
`;

async function hostWorkShare(): Promise<number> {
  const worker = spawn(process.execPath, ['-e', WORK], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  worker.stdout.on('data', (chunk: Buffer) => (out += chunk));
  await new Promise((resolve) => worker.once('exit', resolve));
  const { wallMs, cpuMs } = JSON.parse(out) as { wallMs: number; cpuMs: number };
  return cpuMs / wallMs;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const median = (values: number[]) => percentile(values, 50);
const round1 = (n: number) => Math.round(n * 10) / 10;

/** utime + stime of QEMU and its threads, seconds. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Variant {
  name: string;
  /** The VM's cap, CPUs. */
  cpuLimit: number;
  /** The parent's v2 weight (v1 shares = weight × 10.24). */
  weight: number;
}

const hostCpus = os.availableParallelism();
const variants: Variant[] = [
  { name: `before: cap = vCPUs (2)`, cpuLimit: 2, weight: 100 },
  { name: `cap ${hostCpus - 0.5} (reserve 0.5, the default)`, cpuLimit: Math.min(2, hostCpus - 0.5), weight: 100 },
  { name: `cap ${hostCpus - 1} (reserve 1)`, cpuLimit: Math.min(2, hostCpus - 1), weight: 100 },
  { name: `cap ${hostCpus - 0.5}, VM weight 25`, cpuLimit: Math.min(2, hostCpus - 0.5), weight: 25 },
];

const image = await ensureGuestImage({ cacheDir: defaultCacheDir(), agentBundlePath: AGENT_BUNDLE_PATH });
const driver = new QemuDriver({ accelerator: 'auto', agentProbe: agentClientProbe(), resourceLimits: { cgroupParent: PARENT, hostCpuReserve: 0 } });
const host = await driver.prepare(image);
if (!host.resourceLimits.active) throw new Error(`needs per-VM cgroups: ${host.resourceLimits.detail}`);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sbx-bench-cpu-'));
fs.chmodSync(root, 0o755);
const server = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((resolve) => server.stdout.once('data', (d: Buffer) => resolve((JSON.parse(String(d)) as { port: number }).port)));
const get = async <T>(route: string): Promise<T> => (await fetch(`http://127.0.0.1:${port}${route}`)).json() as Promise<T>;

log('cold boot of a 2-vCPU guest');
const vm = await driver.boot({ vmId: 'bench-cpu', runDir: path.join(root, 'vm'), image, vcpuCount: 2, memoryMb: 512, network: 'none' });
const state = JSON.parse(fs.readFileSync(path.join(vm.runDir, 'vm.json'), 'utf8')) as VmStateFile;
const cpuDir = state.cgroupPaths.find((dir) => fs.existsSync(path.join(dir, 'cpu.max')) || fs.existsSync(path.join(dir, 'cpu.cfs_quota_us')))!;
const v2 = fs.existsSync(path.join(cpuDir, 'cpu.max'));

function apply(variant: Variant): void {
  const quota = cpuQuotaUs(variant.cpuLimit);
  if (v2) {
    fs.writeFileSync(path.join(cpuDir, 'cpu.max'), `${quota} 100000`);
    fs.writeFileSync(path.join(path.dirname(cpuDir), 'cpu.weight'), String(variant.weight));
  } else {
    fs.writeFileSync(path.join(cpuDir, 'cpu.cfs_quota_us'), String(quota));
    fs.writeFileSync(path.join(path.dirname(cpuDir), 'cpu.shares'), String(Math.round((variant.weight * 1024) / 100)));
  }
}

interface Window {
  variant: string;
  vmCpus: number;
  healthzP50Ms: number;
  healthzP99Ms: number;
  eventLoopP99Ms: number;
  /** CPU time / wall time of a host process' fixed work: the share of a CPU it got. */
  hostWorkShare: number;
  load1: number;
}

async function measure(variant: string): Promise<Window> {
  const latencies: number[] = [];
  let stop = false;
  const pinger = (async () => {
    while (!stop) {
      const started = performance.now();
      await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.text());
      latencies.push(performance.now() - started);
      await sleep(50);
    }
  })();
  await get('/delay');
  const cpu0 = cpuSeconds(vm.pid);
  const started = performance.now();
  await sleep(WINDOW_MS / 2);
  const workShare = await hostWorkShare();
  await sleep(Math.max(0, WINDOW_MS - (performance.now() - started)));
  const vmCpus = (cpuSeconds(vm.pid) - cpu0) / ((performance.now() - started) / 1000);
  const delay = await get<{ p99: number }>('/delay');
  stop = true;
  await pinger;
  return {
    variant,
    vmCpus: Math.round(vmCpus * 100) / 100,
    healthzP50Ms: round1(percentile(latencies, 50)),
    healthzP99Ms: round1(percentile(latencies, 99)),
    eventLoopP99Ms: round1(delay.p99),
    hostWorkShare: Math.round(workShare * 100) / 100,
    load1: Number(fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
  };
}

const client = await AgentClient.connect({ socketPath: vm.agentSocketPath }, { timeoutMs: 30_000 });
const windows: Window[] = [];
try {
  apply(variants[0]!);
  windows.push(await measure('idle guest (cap 2)'));
  console.log(JSON.stringify(windows.at(-1)));
  const stopBusy = new AbortController();
  const busy = client
    .exec({ command: 'for i in 1 2; do (while :; do :; done) & done; wait', timeoutMs: 3_600_000, signal: stopBusy.signal })
    .collect()
    .catch(() => undefined);
  await sleep(3000);
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of variants) {
      apply(variant);
      await sleep(1000);
      windows.push(await measure(variant.name));
      console.log(JSON.stringify(windows.at(-1)));
    }
  }
  stopBusy.abort();
  await busy;
} finally {
  await client.close().catch(() => undefined);
  await driver.killAll();
  server.kill();
  fs.rmSync(root, { recursive: true, force: true });
}

const summary = Object.fromEntries(
  [...new Set(windows.map((w) => w.variant))].map((name) => {
    const of = windows.filter((w) => w.variant === name);
    const med = (key: keyof Omit<Window, 'variant'>) => median(of.map((w) => w[key]));
    return [
      name,
      {
        vm_cpus: med('vmCpus'),
        healthz_p50_ms: med('healthzP50Ms'),
        healthz_p99_ms: med('healthzP99Ms'),
        event_loop_p99_ms: med('eventLoopP99Ms'),
        host_work_share: med('hostWorkShare'),
        load1: med('load1'),
      },
    ];
  }),
);
console.log(JSON.stringify({ host_cpus: hostCpus, rounds: ROUNDS, window_ms: WINDOW_MS, medians: summary }));
