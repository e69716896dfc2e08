/**
 * What a user of the API waits for, measured through HTTP on a real server (the engine benchmark's second
 * half): create a session and get the first result of `print(1)` or `echo 1` with the warm pool full; the
 * same for 5, 10 and 20 callers at once; the QEMU CPU a VM burned from its restore to that first result; and
 * the floor under all of it, a bare restore of the same snapshot until the guest answers one byte.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { encodeHostHello, LINK_NONCE_BYTES } from '@sandboxd/agent/protocol';
import type { Config } from '../packages/server/src/config/index.ts';
import type { SandboxEngine } from '../packages/server/src/engine/sandbox-engine.ts';
import { buildApp } from '../packages/server/src/app.ts';
import type { GuestImage } from '../packages/server/src/image/index.ts';
import { QemuDriver } from '../packages/server/src/vm/qemu/qemu-driver.ts';
import type { AgentProbe } from '../packages/server/src/vm/vm-driver.ts';

const HZ = 100;

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10;
}

/** utime + stime of a process and its threads, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / HZ;
}

/**
 * The QEMU process of a VM the engine handed out, found through the engine's own state files
 * (`<data dir>/vms/<driver id>.json` names the public id) and the driver's run directory (`vm.json`: the pid).
 */
function qemuPidOfVm(config: Config, vmId: string): number | undefined {
  const stateDir = path.join(config.server.dataDir, 'vms');
  for (const name of fs.readdirSync(stateDir)) {
    if (!name.endsWith('.json')) continue;
    const state = JSON.parse(fs.readFileSync(path.join(stateDir, name), 'utf8')) as { driverId: string; vmId: string };
    if (state.vmId !== vmId) continue;
    return (JSON.parse(fs.readFileSync(path.join(config.vm.runDir, state.driverId, 'vm.json'), 'utf8')) as { pid: number }).pid;
  }
  return undefined;
}

/**
 * An agent probe with no protocol at all: the VM is up when the guest sent back any byte after the host's
 * link hello (the agent answers it from the snapshot's waiting state). What a restore costs before any of
 * the agent client's handshake, clock, entropy or identity work.
 */
function firstByteProbe(): AgentProbe {
  return {
    async waitUntilReady(socketPath, { signal }) {
      for (;;) {
        signal.throwIfAborted();
        const answered = await new Promise<boolean>((resolve) => {
          const socket = net.connect(socketPath);
          const done = (ok: boolean) => {
            socket.destroy();
            resolve(ok);
          };
          socket.once('connect', () => socket.write(encodeHostHello(randomBytes(LINK_NONCE_BYTES))));
          socket.once('data', () => done(true));
          socket.once('error', () => done(false));
          signal.addEventListener('abort', () => done(false), { once: true });
        });
        if (answered) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    release: async () => {},
  };
}

/** Bare restores of the pool's snapshot until the guest answers one byte: the floor of every restore. */
export async function measureRestoreFloor(config: Config, image: GuestImage, snapshotDir: string, memoryMb: number, rounds: number): Promise<number[]> {
  const driver = new QemuDriver({ accelerator: config.vm.accel, agentProbe: firstByteProbe() });
  await driver.prepare(image);
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const vmId = `bench-floor-${i}`;
    const start = performance.now();
    await driver.restore({ vmId, runDir: path.join(config.vm.runDir, vmId), snapshotDir, memoryMb, network: 'user', timeoutMs: 60_000 });
    times.push(performance.now() - start);
    await driver.kill(vmId);
  }
  return times;
}

interface FirstResult {
  ms: number;
  ok: boolean;
  status: number;
  /** QEMU CPU seconds of the VM when its first result arrived (restore, pool entry and first run included). */
  vmCpuSeconds?: number;
}

export interface FirstResultReport {
  first_result_python_ms_p50: number;
  first_result_bash_ms_p50: number;
  vm_cpu_s_to_first_result: number;
  [concurrency: `concurrent${number}_${'p50_ms' | 'p99_ms' | 'errors' | 'p99_ratio'}`]: number;
}

/**
 * Runs a real server (warm pool of one per warm variant, session defaults from the configuration) and
 * measures create session → first result through HTTP, alone and in bursts.
 */
export async function measureFirstResults(config: Config, options: { rounds: number; bursts: number[]; log: (m: string) => void }): Promise<FirstResultReport> {
  const { app, services } = await buildApp({ config: { ...config, vm: { ...config.vm, poolSize: 1 } }, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  const base = `http://127.0.0.1:${address.port}`;
  const engine = services.sandbox.engine as SandboxEngine;
  try {
    await services.sandbox.vms.start();
    const user = await services.users.create({
      username: `bench-${randomBytes(3).toString('hex')}`,
      password: randomBytes(18).toString('base64url'),
      plan: 'enterprise',
    });
    const { fullKey } = await services.apiKeys.create(user.id, { description: 'benchmark' });
    const post = async (url: string, body: unknown) => {
      const response = await fetch(base + url, {
        method: 'POST',
        headers: { 'x-api-key': fullKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json().catch(() => null)) as Record<string, unknown> | null };
    };
    const poolFull = async () => {
      const wanted = config.vm.warmVcpus.length;
      while (Object.values(engine.poolCounts()).filter((n) => n >= 1).length < wanted) await new Promise((r) => setTimeout(r, 100));
    };
    const firstResult = async (run: Record<string, unknown>, measureCpu: boolean): Promise<FirstResult> => {
      const start = performance.now();
      const created = await post('/v1/sessions/session', {});
      if (created.status !== 200) return { ms: performance.now() - start, ok: false, status: created.status };
      const sessionId = created.body!.session_id as string;
      const result = await post('/execute', { session_id: sessionId, ...run });
      const ms = performance.now() - start;
      const vmId = result.body?.vm_id as string | undefined;
      const pid = measureCpu && vmId ? qemuPidOfVm(config, vmId) : undefined;
      const vmCpuSeconds = pid ? cpuSeconds(pid) : undefined;
      await post('/kill', { session_id: sessionId });
      return { ms, ok: result.status === 200 && result.body?.exit_code === 0, status: result.status, ...(vmCpuSeconds !== undefined ? { vmCpuSeconds } : {}) };
    };

    const report: Record<string, number> = {};
    const cpu: number[] = [];
    for (const [name, run] of [
      ['python', { code: 'print(1)' }],
      ['bash', { language: 'bash', command: 'echo 1' }],
    ] as const) {
      const times: number[] = [];
      for (let i = 0; i < options.rounds; i++) {
        await poolFull();
        const result = await firstResult(run, true);
        if (!result.ok) throw new Error(`first ${name} result failed with HTTP ${result.status}`);
        times.push(result.ms);
        if (result.vmCpuSeconds !== undefined) cpu.push(result.vmCpuSeconds);
      }
      report[`first_result_${name}_ms_p50`] = percentile(times, 50);
      options.log(`first result (${name}, warm pool) p50 ${report[`first_result_${name}_ms_p50`]} ms [${times.map(Math.round).join(', ')}]`);
    }
    report.vm_cpu_s_to_first_result = percentile(cpu, 50);
    options.log(`QEMU CPU of a VM from its restore to its first result: p50 ${report.vm_cpu_s_to_first_result} s`);

    const single = report.first_result_python_ms_p50!;
    for (const n of options.bursts) {
      await poolFull();
      // Let the refills of the previous burst finish, so each burst starts from the same state.
      await new Promise((r) => setTimeout(r, 5000));
      const results = await Promise.all(Array.from({ length: n }, () => firstResult({ code: 'print(1)' }, false)));
      const times = results.map((r) => r.ms);
      report[`concurrent${n}_p50_ms`] = Math.round(percentile(times, 50));
      report[`concurrent${n}_p99_ms`] = Math.round(percentile(times, 99));
      report[`concurrent${n}_errors`] = results.filter((r) => !r.ok).length;
      report[`concurrent${n}_p99_ratio`] = Math.round((percentile(times, 99) / single) * 10) / 10;
      const statuses = results.filter((r) => !r.ok).map((r) => r.status);
      options.log(
        `${n} at once: p50 ${report[`concurrent${n}_p50_ms`]} ms, p99 ${report[`concurrent${n}_p99_ms`]} ms (${report[`concurrent${n}_p99_ratio`]}x the single p50), ` +
          `${report[`concurrent${n}_errors`]} errors${statuses.length ? ` (HTTP ${statuses.join(', ')})` : ''}`,
      );
    }
    return report as unknown as FirstResultReport;
  } finally {
    await app.close();
  }
}
