// test-lane: heavy (a server process with real VMs, killed and restarted): scripts/run-tests.mjs runs what imports this one at a time.
/**
 * The soak: many create → execute → upload → terminal → kill cycles against a real server process with real
 * VMs, SIGKILLing the server mid-load and starting it again on the same data directory, then a graceful stop
 * and an inventory of everything that could have been left behind: QEMU processes, run directories (sockets,
 * overlays, logs), transfer mounts, cgroups, VMs the store still thinks are alive, and execution records that
 * never ended. `npm run soak` runs 1,000 cycles with two kills; `soak.test.ts` runs a short one in `npm test`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { WebSocket } from 'ws';
import { loadConfig } from '../../src/config/index.ts';
import { qemuProcessesMatching } from '../engine/engine-fixture.ts';
import { startServerProcess, type RunningServer } from '../helpers/processes.ts';

export interface SoakOptions {
  cycles: number;
  /** SIGKILLs of the server, spread evenly over the cycles. */
  kills: number;
  /** Cycles in flight at once. */
  concurrency: number;
  log?: (message: string) => void;
}

/** What was left behind after the final graceful stop; every list should be empty. */
export interface SoakLeftovers {
  qemuProcesses: number[];
  runDirectories: string[];
  mounts: string[];
  cgroups: string[];
  liveVms: { id: string; status: string }[];
  unfinishedExecutions: { id: number; status: string }[];
  /** Execution ids a client was given that the store does not have. */
  missingExecutions: number[];
}

export interface SoakReport {
  cycles: number;
  completedCycles: number;
  /** Cycles cut off by a server kill (their requests failed to connect or were answered by the dying server). */
  interruptedCycles: number;
  /** Failures that were not explained by a kill: each is a bug. */
  failures: string[];
  kills: number;
  durationMs: number;
  leftovers: SoakLeftovers;
}

class ServerDown extends Error {}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-soak-'));
  const env = {
    SANDBOXD_DATA_DIR: dataDir,
    SANDBOXD_POOL_SIZE: '1',
    SANDBOXD_WARM_VCPUS: '1',
    SANDBOXD_LOG_LEVEL: 'info', // startServerProcess waits for the "sandboxd is serving" line
  };
  const { runDir: runRoot } = loadConfig({ SANDBOXD_DATA_DIR: dataDir }).vm;
  // Every VM this soak's server ran: run directories are named by the driver's id, which also names the cgroup.
  const driverIds = new Set<string>();
  const watcher = setInterval(() => {
    for (const name of listDir(runRoot)) driverIds.add(name);
  }, 200);
  try {
    return await soak(options, env, dataDir, runRoot, driverIds, started, log);
  } finally {
    clearInterval(watcher);
    await sweep(runRoot, driverIds);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function soak(
  options: SoakOptions,
  env: Record<string, string>,
  dataDir: string,
  runRoot: string,
  driverIds: Set<string>,
  started: number,
  log: (message: string) => void,
): Promise<SoakReport> {
  let server: RunningServer = await startServerProcess(env, 300_000);
  const adminKey = fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim();
  let restarting: Promise<void> | null = null;
  const executionIds = new Set<number>();
  const failures: string[] = [];
  let completed = 0;
  let interrupted = 0;
  let next = 0;
  let kills = 0;
  const killAt = Array.from({ length: options.kills }, (_, i) => Math.floor(((i + 1) * options.cycles) / (options.kills + 1)));

  const request = async (method: string, url: string, init: { json?: unknown; body?: FormData } = {}): Promise<{ status: number; body: any }> => {
    if (restarting) throw new ServerDown('server restarting');
    const headers: Record<string, string> = { 'x-api-key': adminKey };
    let body: string | FormData | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else body = init.body;
    let response: Response;
    try {
      response = await fetch(server.baseUrl + url, { method, headers, ...(body !== undefined ? { body } : {}) });
    } catch (error) {
      throw new ServerDown(`${method} ${url}: ${(error as Error).message}`);
    }
    const text = await response.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed };
  };

  const expectOk = (step: string, result: { status: number; body: any }) => {
    if (result.status !== 200) throw new Error(`${step}: HTTP ${result.status} ${JSON.stringify(result.body).slice(0, 300)}`);
    return result.body;
  };

  /** Attaches to the terminal, types a command and waits for its output. */
  const useTerminal = (url: string, token: string, marker: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const socket = new WebSocket(`${url}?token=${encodeURIComponent(token)}`);
      let output = '';
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`terminal: no "${marker}" within 60 s (got ${JSON.stringify(output.slice(-200))})`));
      }, 60_000);
      socket.on('message', (data, isBinary) => {
        if (!isBinary) return;
        output += data.toString();
        // The shell echoes the typed line, which has "$((20+22))", never "-42" (whatever the cycle number).
        if (output.includes(`${marker}-42`)) {
          clearTimeout(timer);
          socket.close();
          resolve();
        }
      });
      socket.once('open', () => socket.send(Buffer.from(`echo ${marker}-$((20+22))\r`), { binary: true }));
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(restarting ? new ServerDown(error.message) : error);
      });
    });

  const cycle = async (n: number): Promise<void> => {
    const session = expectOk(
      'create',
      await request('POST', '/v1/sessions/session', { json: { vcpu_count: 1, vm_lifetime_seconds: 300, metadata: { soak: String(n) } } }),
    );
    const run = await request('POST', '/execute', { json: { session_id: session.session_id, code: `print(${n} * 2)`, timeout: 120 } });
    if (typeof run.body?.execution_id === 'number') executionIds.add(run.body.execution_id);
    const result = expectOk('execute', run);
    if (result.stdout !== `${n * 2}\n`) throw new Error(`execute: stdout ${JSON.stringify(result.stdout)}`);
    const form = new FormData();
    form.append('session_id', session.session_id);
    form.append('remote_path', `/root/soak-${n}.txt`);
    form.append('file', new Blob([`cycle ${n}\n`]), 'soak.txt');
    expectOk('upload', await request('POST', '/upload', { body: form }));
    const pty = expectOk('terminal', await request('POST', `/v1/sessions/${session.session_id}/pty/sessions`, { json: { cols: 80, rows: 24 } }));
    await useTerminal(pty.websocket_url, pty.connect_token, `soak${n}`);
    expectOk('kill', await request('POST', '/kill', { json: { session_id: session.session_id } }));
  };

  const restart = async (): Promise<void> => {
    kills += 1;
    log(`SIGKILL of the server (kill ${kills} of ${options.kills}) after ${next} cycles started`);
    server.process.kill('SIGKILL');
    await new Promise((r) => server.process.once('exit', r));
    server = await startServerProcess(env, 300_000);
    log('server restarted on the same data directory');
  };

  const worker = async (): Promise<void> => {
    for (;;) {
      if (restarting) await restarting;
      const n = next++;
      if (n >= options.cycles) return;
      if (killAt.includes(n) && !restarting) {
        // Mid-load: the other workers' cycles are in flight.
        restarting = restart().finally(() => (restarting = null));
      }
      const killsBefore = kills;
      try {
        await cycle(n);
        completed += 1;
        if (completed % 50 === 0) log(`${completed} cycles done (${Math.round((Date.now() - started) / 1000)} s)`);
      } catch (error) {
        // A cycle that overlapped a kill may fail in many ways (its VM reaped, its terminal gone): not a bug.
        if (error instanceof ServerDown || restarting || kills !== killsBefore) interrupted += 1;
        else failures.push(`cycle ${n}: ${(error as Error).message}`);
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    if (restarting) await restarting;
    await server.stop();
  }
  for (const name of listDir(runRoot)) driverIds.add(name);

  const leftovers = inventory(dataDir, runRoot, driverIds, executionIds);
  return { cycles: options.cycles, completedCycles: completed, interruptedCycles: interrupted, failures, kills, durationMs: Date.now() - started, leftovers };
}

/**
 * After the inventory (or a failed soak): removes whatever the server left, so that a soak that found a leak
 * does not leave VMs running on the machine.
 */
async function sweep(runRoot: string, driverIds: Set<string>): Promise<void> {
  for (const pid of qemuProcessesMatching(runRoot)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  const deadline = Date.now() + 5000;
  while (qemuProcessesMatching(runRoot).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const line of fs.readFileSync('/proc/mounts', 'utf8').split('\n')) {
    const target = line.split(' ')[1] ?? '';
    if (target.startsWith(runRoot)) spawnSync('umount', ['-l', target]);
  }
  fs.rmSync(runRoot, { recursive: true, force: true });
  for (const id of driverIds) {
    try {
      fs.rmdirSync(path.join('/sys/fs/cgroup/sandboxd', id));
    } catch {
      // not there, or not empty yet
    }
  }
}

/** What the stopped server left behind (see {@link SoakLeftovers}). */
function inventory(dataDir: string, runRoot: string, driverIds: Set<string>, executionIds: Set<number>): SoakLeftovers {
  const mounts = fs
    .readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((target) => target.startsWith(runRoot));
  const cgroups = [...driverIds].map((id) => path.join('/sys/fs/cgroup/sandboxd', id)).filter((dir) => fs.existsSync(dir));
  const db = new Database(path.join(dataDir, 'sandboxd.db'), { readonly: true });
  try {
    const liveVms = db.prepare("SELECT id, status FROM vms WHERE status NOT IN ('killed')").all() as { id: string; status: string }[];
    const unfinishedExecutions = db.prepare("SELECT id, status FROM executions WHERE status IN ('queued', 'running')").all() as {
      id: number;
      status: string;
    }[];
    const known = new Set((db.prepare('SELECT id FROM executions').all() as { id: number }[]).map((r) => r.id));
    return {
      qemuProcesses: qemuProcessesMatching(runRoot),
      runDirectories: listDir(runRoot),
      mounts,
      cgroups,
      liveVms,
      unfinishedExecutions,
      missingExecutions: [...executionIds].filter((id) => !known.has(id)),
    };
  } finally {
    db.close();
  }
}
