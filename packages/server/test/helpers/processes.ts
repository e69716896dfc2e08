// test-lane: heavy (runs the real server process (and its VMs)): scripts/run-tests.mjs runs what imports this one at a time.
/** Spawning the real sandboxd processes in tests. */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EPHEMERAL_LISTENER_ENV, freePort } from './ports.ts';

export const SERVER_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface RunningServer {
  process: ChildProcessWithoutNullStreams;
  baseUrl: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<number | null>;
}

/**
 * Runs the server from its TypeScript sources through tsx (`npm run dev`, without the set-up) and waits until it
 * serves. The compiled dist/main.js that `npm start` runs is tested through the Debian package (packaging/deb.test.ts).
 */
export async function startServerProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: SERVER_ROOT,
    // The admin, internal and SSH listeners on ports of their own choosing: their defaults (the public port + 1
    // and + 2, 2222) may be taken by another server here (helpers/ports.ts).
    // Without root there is no network guard: VMs start unguarded there (as root the guard is required).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      SANDBOXD_PORT: String(port),
      ...EPHEMERAL_LISTENER_ENV,
      ...(process.getuid?.() !== 0 ? { SANDBOXD_VM_NETWORK_UNGUARDED: 'true' } : {}),
      ...env,
    },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (!output.includes('sandboxd is serving')) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start in ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    process: child,
    baseUrl,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        // Ended already (a test may have killed it: exitCode stays null after a signal).
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

/**
 * JSON calls with the admin key a server process wrote to `dataDir` at its first start, to whichever server
 * `baseUrl()` names at the time of the call (tests restart it on the same data directory).
 */
export function adminApi(dataDir: string, baseUrl: () => string) {
  const apiKey = fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim();
  return async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${baseUrl()}${url}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
}

/**
 * Runs the `sandboxd` admin command synchronously, from its sources (bin/sandboxd.mjs runs the compiled
 * dist/, which a test run does not rebuild between edits).
 */
export function runAdminCommand(args: string[], env: Record<string, string>, input?: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
    cwd: SERVER_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    encoding: 'utf8',
    ...(input !== undefined ? { input } : {}),
  });
}

/** Polls `condition` until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, intervalMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
