/**
 * The E2B facade's overhead (issue 34): `Sandbox.create()` → the first `commands.run('echo 1')` result through the
 * unmodified `e2b` SDK, beside the same flow through sandboxd's own SDK (`sessions.create()` →
 * `session.commands.run('echo 1')`), alternating, on one real server process with its warm pool. Each sandbox is
 * killed after its round (not timed). Prints p50 and p99 of both and their ratio (the cost of compatibility), then
 * one JSON line. `npm run bench:e2b` (root, a quiet host); BENCH_ROUNDS (default 20).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Sandbox } from 'e2b';
import { Sandboxd } from '../packages/sdk/src/index.ts';
import { startServerProcess } from '../packages/server/test/helpers/processes.ts';
import { percentile } from './first-result.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const log = (message: string) => process.stderr.write(`[bench:e2b] ${message}\n`);

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-e2b-'));
  const server = await startServerProcess({ SANDBOXD_DATA_DIR: dataDir, SANDBOXD_WARM_VCPUS: '1' }, 120_000);
  const apiKey = fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim();
  const client = new Sandboxd({ baseUrl: server.baseUrl, apiKey });
  const e2bOptions = { apiKey, apiUrl: `${server.baseUrl}/e2b`, sandboxUrl: `${server.baseUrl}/e2b/sandbox` };
  const e2bMs: number[] = [];
  const nativeMs: number[] = [];
  try {
    // One round of each first, not counted: the first restore of the template reads its files from disk.
    for (let round = 0; round <= ROUNDS; round++) {
      let started = performance.now();
      const sandbox = await Sandbox.create(e2bOptions);
      const viaE2b = await sandbox.commands.run('echo 1');
      const e2bTime = performance.now() - started;
      if (viaE2b.stdout !== '1\n') throw new Error(`e2b: unexpected output ${JSON.stringify(viaE2b.stdout)}`);
      await sandbox.kill();

      started = performance.now();
      const session = await client.sessions.create();
      const viaNative = await session.commands.run('echo 1');
      const nativeTime = performance.now() - started;
      if (viaNative.stdout !== '1\n') throw new Error(`sandboxd: unexpected output ${JSON.stringify(viaNative.stdout)}`);
      await session.kill();

      if (round === 0) continue;
      e2bMs.push(e2bTime);
      nativeMs.push(nativeTime);
      log(`round ${round}/${ROUNDS}: e2b ${e2bTime.toFixed(0)} ms, sandboxd ${nativeTime.toFixed(0)} ms`);
    }
  } finally {
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const results = {
    rounds: ROUNDS,
    e2b_p50_ms: percentile(e2bMs, 50),
    e2b_p99_ms: percentile(e2bMs, 99),
    sandboxd_p50_ms: percentile(nativeMs, 50),
    sandboxd_p99_ms: percentile(nativeMs, 99),
    ratio_p50: Math.round((percentile(e2bMs, 50) / percentile(nativeMs, 50)) * 100) / 100,
    ratio_p99: Math.round((percentile(e2bMs, 99) / percentile(nativeMs, 99)) * 100) / 100,
  };
  log(`create → first result, p50: e2b ${results.e2b_p50_ms} ms, sandboxd ${results.sandboxd_p50_ms} ms (×${results.ratio_p50})`);
  log(`create → first result, p99: e2b ${results.e2b_p99_ms} ms, sandboxd ${results.sandboxd_p99_ms} ms (×${results.ratio_p99})`);
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

await main();
