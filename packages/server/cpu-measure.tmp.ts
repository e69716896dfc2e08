import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDriver, guestShell, scratchDir } from './test/vm/vm-fixture.ts';

const SNAP = process.argv[2]!;
const PARENT = '/sys/fs/cgroup/cpu/sandboxd-wsvm';
const rec = createDriver({ resourceLimits: { cgroupParent: 'sandboxd-wsvm' } });
const root = await scratchDir('sbx-cpu-');
const ticks = async (pid: number) => { const s = await readFile(`/proc/${pid}/stat`, 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return Number(f[11]) + Number(f[12]); };
const server = spawn(process.execPath, ['/tmp/wsvm/probe-server.mjs'], { stdio: ['ignore', 'pipe', 'inherit'] });
const port: number = await new Promise((r) => server.stdout.once('data', (d) => r(JSON.parse(String(d)).port)));
const pct = (xs: number[], p: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]!; };
const vm = await rec.driver.restore({ vmId: 'cpu-hog', runDir: join(root, 'cpu-hog'), snapshotDir: SNAP, memoryMb: 512, network: 'none' });
const cg = join(PARENT, 'cpu-hog');
console.log('vm', vm.pid, await readFile(join(cg, 'cpu.cfs_quota_us'), 'utf8'));
async function windowMeasure(label: string, seconds = 10) {
  const lat: number[] = [];
  let stop = false;
  const pinger = (async () => { while (!stop) { const t = performance.now(); await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.text()); lat.push(performance.now() - t); await sleep(20); } })();
  const t0 = await ticks(vm.pid); const w0 = Date.now();
  const st0 = await readFile(join(cg, 'cpu.stat'), 'utf8');
  await sleep(1000);
  const work = (await (await fetch(`http://127.0.0.1:${port}/work`)).json()) as { wallMs: number; cpuMs: number };
  await sleep(Math.max(0, seconds * 1000 - (Date.now() - w0)));
  const t1 = await ticks(vm.pid); const w1 = Date.now();
  stop = true; await pinger;
  const st1 = await readFile(join(cg, 'cpu.stat'), 'utf8');
  const thr = (s: string) => Number(/nr_throttled (\d+)/.exec(s)?.[1]);
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ')[0];
  console.log(JSON.stringify({ label, vmCpuPct: +(((t1 - t0) / 100) / ((w1 - w0) / 1000) * 100).toFixed(1), throttled: thr(st1) - thr(st0), healthzP50: +pct(lat, 0.5).toFixed(1), healthzP99: +pct(lat, 0.99).toFixed(1), healthzMax: +Math.max(...lat).toFixed(1), hostWork: { wallMs: Math.round(work.wallMs), cpuMs: Math.round(work.cpuMs), share: +(work.cpuMs / work.wallMs).toFixed(2) }, load }));
}
const set = async (vmQuota: number, parentQuota: number, parentShares: number) => {
  await writeFile(join(cg, 'cpu.cfs_quota_us'), String(vmQuota));
  await writeFile(join(PARENT, 'cpu.cfs_quota_us'), String(parentQuota));
  await writeFile(join(PARENT, 'cpu.shares'), String(parentShares));
};
try {
  await set(200000, -1, 1024);
  await windowMeasure('idle VM');
  const r = await guestShell(vm.agentSocketPath, "for i in 1 2; do setsid sh -c 'while :; do :; done' </dev/null >/dev/null 2>&1 & done; echo started");
  console.log(r.output.trim());
  await sleep(2000);
  const variants: [string, number, number, number][] = [
    ['A before: vm 2.0 CPU', 200000, -1, 1024],
    ['B vm cap 1.5', 150000, -1, 1024],
    ['D vm 2.0, parent shares 256', 200000, -1, 256],
    ['E vm 1.5, parent shares 256', 150000, -1, 256],
    ['F vm 1.0', 100000, -1, 1024],
  ];
  for (let round = 0; round < Number(process.argv[3] ?? 2); round++) for (const [label, q, pq, sh] of variants) { await set(q, pq, sh); await sleep(1000); await windowMeasure(label); }
} finally {
  await set(200000, -1, 1024).catch(() => {});
  await rec.driver.killAll();
  server.kill();
}
