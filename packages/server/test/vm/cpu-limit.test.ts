/**
 * One runaway VM must not starve the host: a guest busy on every vCPU gets at most its cgroup's CPU cap,
 * min(vCPUs, host CPUs − reserve), measured from the CPU time QEMU used over a window. The reserve is set so
 * that the cap (one CPU) is below the VM's two vCPUs on any host. Uses a cgroup parent of its own, so the
 * test leaves the parent that other servers on the machine share alone. A real cold-booted VM, ~1 minute
 * under TCG.
 */
import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentClient } from '../../src/agent/index.ts';
import type { VmStateFile } from '../../src/vm/qemu/run-dir.ts';
import type { HostReport } from '../../src/vm/vm-driver.ts';
import { createDriver, scratchDir, testImage, type RecordingDriver } from './vm-fixture.ts';

const HOST_CPUS = availableParallelism();
const VM_CPU_CAP = 1;
const WINDOW_MS = 10_000;

/** CPU time of a VM, seconds: its cgroup's usage where cgroup v2 counts it, else QEMU's (all threads). */
async function vmCpuSeconds(pid: number, cgroupPaths: string[]): Promise<number> {
  for (const dir of cgroupPaths) {
    const usage = /^usage_usec (\d+)$/m.exec(await readFile(join(dir, 'cpu.stat'), 'utf8').catch(() => ''));
    if (usage) return Number(usage[1]) / 1e6;
  }
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, USER_HZ
}

/** The CPU cap written into the VM's cgroup, in CPUs. */
async function cgroupCpuCap(cgroupPaths: string[]): Promise<number> {
  for (const dir of cgroupPaths) {
    if (existsSync(join(dir, 'cpu.max'))) {
      const [quota, period] = (await readFile(join(dir, 'cpu.max'), 'utf8')).trim().split(' ');
      return quota === 'max' ? Infinity : Number(quota) / Number(period);
    }
    if (existsSync(join(dir, 'cpu.cfs_quota_us'))) {
      const quota = Number(await readFile(join(dir, 'cpu.cfs_quota_us'), 'utf8'));
      const period = Number(await readFile(join(dir, 'cpu.cfs_period_us'), 'utf8'));
      return quota < 0 ? Infinity : quota / period;
    }
  }
  throw new Error(`no CPU controller among ${cgroupPaths.join(', ')}`);
}

describe('a VM cannot starve the host of CPU', { timeout: 15 * 60_000 }, () => {
  let rec: RecordingDriver;
  let host: HostReport;
  let root: string;

  before(async () => {
    const image = await testImage();
    rec = createDriver({ resourceLimits: { cgroupParent: 'sandboxd-test-cpu', hostCpuReserve: HOST_CPUS - VM_CPU_CAP } });
    host = await rec.driver.prepare(image);
    root = await scratchDir('sbx-cpu-');
  });

  after(async () => {
    await rec?.driver.killAll();
    if (root) await rm(root, { recursive: true, force: true });
  });

  test('a 2-vCPU guest busy on both vCPUs gets at most the CPU the host leaves it', async (t) => {
    if (!host.resourceLimits.active) return t.skip(host.resourceLimits.detail);
    const image = await testImage();
    const vm = await rec.driver.boot({ vmId: 'busy', runDir: join(root, 'busy'), image, vcpuCount: 2, memoryMb: 512, network: 'none' });
    const state = JSON.parse(await readFile(join(vm.runDir, 'vm.json'), 'utf8')) as VmStateFile;
    t.diagnostic(host.resourceLimits.detail);
    assert.equal(await cgroupCpuCap(state.cgroupPaths), VM_CPU_CAP, 'the cgroup caps the VM below its vCPUs');

    const client = await AgentClient.connect({ socketPath: vm.agentSocketPath }, { timeoutMs: 30_000 });
    const stop = new AbortController();
    const busy = client
      .exec({ command: 'for i in 1 2; do (while :; do :; done) & done; wait', timeoutMs: 120_000, signal: stop.signal })
      .collect()
      .catch(() => undefined);
    try {
      await sleep(3000); // both loops running
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const before = await vmCpuSeconds(vm.pid, state.cgroupPaths);
      const started = performance.now();
      await sleep(WINDOW_MS);
      const usedCpus = ((await vmCpuSeconds(vm.pid, state.cgroupPaths)) - before) / ((performance.now() - started) / 1000);
      delay.disable();
      t.diagnostic(
        `busy 2-vCPU guest used ${usedCpus.toFixed(2)} CPUs (cap ${VM_CPU_CAP}, host ${HOST_CPUS} CPUs, load ${(await readFile('/proc/loadavg', 'utf8')).split(' ')[0]}); ` +
          `this process' event-loop delay meanwhile p50 ${(delay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`,
      );
      // CFS enforces the quota per 100 ms period; allow a few percent for accounting granularity.
      assert.ok(usedCpus <= VM_CPU_CAP * 1.05, `the guest used ${usedCpus.toFixed(2)} CPUs, more than its cap of ${VM_CPU_CAP}`);
    } finally {
      stop.abort();
      await busy;
      await client.close();
    }
  });
});
