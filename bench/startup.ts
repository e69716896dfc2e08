/**
 * `npm run bench:startup`: how long the server takes from `node` to "sandboxd is serving", compiled
 * (dist/main.js, what npm start and the Debian package run) against its TypeScript sources through tsx (the
 * development run), alternating, on one data directory (created by a first start that is not counted). The pool
 * is off (SANDBOXD_POOL_SIZE=0) and each server is stopped with SIGTERM as soon as it serves, so no VM work
 * follows a start into the next one.
 *
 *   BENCH_STARTUP_ROUNDS (default 10) starts of each kind
 *
 * Progress on stderr; ends with one JSON line: p50/p90 for each and the ratio.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { percentile } from './first-result.ts';

const SERVER_ROOT = fileURLToPath(new URL('../packages/server/', import.meta.url));
const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 10);
const KINDS = { compiled: ['dist/main.js'], tsx: ['--import', 'tsx', 'src/main.ts'] } as const;
type Kind = keyof typeof KINDS;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-startup-'));
const env = {
  ...process.env,
  SANDBOXD_DATA_DIR: dataDir,
  SANDBOXD_PORT: '0',
  SANDBOXD_ADMIN_LISTEN: '127.0.0.1:0',
  SANDBOXD_INTERNAL_LISTEN: '127.0.0.1:0',
  SANDBOXD_SSH_LISTEN: '127.0.0.1:0',
  SANDBOXD_POOL_SIZE: '0',
};

/** Milliseconds from spawn to the "sandboxd is serving" line; the process is stopped and waited for. */
function startOnce(kind: Kind): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...KINDS[kind]], { cwd: SERVER_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let servedAfter: number | undefined;
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (servedAfter === undefined && output.includes('sandboxd is serving')) {
        servedAfter = performance.now() - started;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      if (servedAfter === undefined) reject(new Error(`${kind} server exited with ${code} before serving:\n${output}`));
      else resolve(servedAfter);
    });
  });
}

try {
  if (!fs.existsSync(path.join(SERVER_ROOT, 'dist', 'main.js'))) throw new Error('no dist/: run npm run build first');
  process.stderr.write('[bench] first start (creates the data directory; not counted)\n');
  await startOnce('compiled');
  const times: Record<Kind, number[]> = { compiled: [], tsx: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of ['compiled', 'tsx'] as const) times[kind].push(await startOnce(kind));
    process.stderr.write(`[bench] round ${round}/${ROUNDS}: compiled ${times.compiled.at(-1)!.toFixed(0)} ms, tsx ${times.tsx.at(-1)!.toFixed(0)} ms\n`);
  }
  const result = {
    rounds: ROUNDS,
    compiled_ms_p50: percentile(times.compiled, 50),
    compiled_ms_p90: percentile(times.compiled, 90),
    tsx_ms_p50: percentile(times.tsx, 50),
    tsx_ms_p90: percentile(times.tsx, 90),
  };
  console.log(JSON.stringify({ ...result, tsx_over_compiled_p50: Math.round((result.tsx_ms_p50 / result.compiled_ms_p50) * 100) / 100 }));
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
