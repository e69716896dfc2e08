/**
 * Density and bursts on real VMs (issue 35), over one pool of 20 VMs restored from one snapshot:
 * - they share the snapshot's memory: each QEMU maps the snapshot's RAM file copy-on-write, so the pages no VM has
 *   written are one copy in the host's page cache, counted in every VM's RSS but only once across them all in PSS;
 * - 20 first executes sent at once by a client that never retries all succeed, each on a VM from the pool (none
 *   waits for a restore), and the pool then aims to hold 20 for the next burst.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { SandboxEngine } from '../../src/engine/sandbox-engine.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const POOL = 20;
/** Pooled VMs of the test server: 1 vCPU (its warm variant), 512 MiB (the default memory). */
const POOL_KEY = '1:512';

/** KiB figures of a process: all of it (smaps_rollup), and of its mappings of `file` (smaps). */
function memoryOf(pid: number, file: string): { rss: number; pss: number; fileRss: number; filePss: number; fileSharedClean: number } {
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text)?.[1] ?? NaN);
  const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  let fileRss = 0;
  let filePss = 0;
  let fileSharedClean = 0;
  // smaps: a header line per mapping (its path last), then its fields.
  for (const block of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    if (!block.split('\n')[0]!.endsWith(` ${file}`)) continue;
    fileRss += field(block, 'Rss');
    filePss += field(block, 'Pss');
    fileSharedClean += field(block, 'Shared_Clean');
  }
  return { rss: field(rollup, 'Rss'), pss: field(rollup, 'Pss'), fileRss, filePss, fileSharedClean };
}

/** The guest-memory file a QEMU process restored from (`mem-path=` of its memory backend). */
function memoryFileOf(pid: number): string {
  const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const backend = argv.find((arg) => arg.startsWith('memory-backend-file,'));
  const memPath = backend?.split(',').find((part) => part.startsWith('mem-path='));
  assert.ok(memPath, `QEMU ${pid} has a file-backed memory: ${backend}`);
  return memPath.slice('mem-path='.length);
}

/** The QEMU processes whose command line names `runDir` (this server's VMs, not other tests'). */
function qemuPidsUnder(runDir: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv[0]!.includes('qemu-system') && argv.some((arg) => arg.includes(runDir));
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

describe('a pool of 20 VMs from one snapshot', () => {
  let server: TestServer;
  let apiKey: string;
  let engine: SandboxEngine;

  before(async () => {
    // Sessions get the pooled shape by default (1 vCPU, the test server's warm variant; the default is 2).
    server = await startTestServer({ config: { poolSize: POOL, poolMax: POOL, defaultVcpus: 1 } });
    ({ apiKey } = await server.createUserWithKey('burst', 'enterprise'));
    engine = server.services.sandbox.engine as unknown as SandboxEngine;
    await engine.start();
    const started = Date.now();
    let last = -1;
    for (;;) {
      const count = engine.poolCounts()[POOL_KEY] ?? 0;
      if (count >= POOL) break;
      if (count !== last) console.log(`pool: ${count} of ${POOL} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      last = count;
      assert.ok(Date.now() - started < 600_000, `the pool holds ${count} of ${POOL} VMs after 10 minutes`);
      await delay(250);
    }
    console.log(`pool: ${POOL} VMs restored and warmed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
  after(() => server?.close());

  test('they share the snapshot memory none of them wrote: its pages count once in PSS, in every VM in RSS', () => {
    const pids = qemuPidsUnder(server.config.vm.runDir);
    assert.ok(pids.length >= POOL, `${pids.length} QEMU processes of this server`);
    const files = new Set(pids.map(memoryFileOf));
    assert.equal(files.size, 1, `every VM restored from one snapshot's memory file: ${[...files].join(', ')}`);
    const [file] = files as unknown as [string];
    const memory = pids.map((pid) => memoryOf(pid, file));
    const sum = (pick: (m: (typeof memory)[number]) => number) => memory.reduce((total, m) => total + pick(m), 0);
    const mib = (kib: number) => (kib / 1024).toFixed(0);
    console.log(
      `${pids.length} idle VMs: RSS ${mib(sum((m) => m.rss))} MiB, PSS ${mib(sum((m) => m.pss))} MiB in all ` +
        `(${(sum((m) => m.pss) / pids.length / 1024).toFixed(1)} MiB each); of it the snapshot's memory file: ` +
        `RSS ${mib(sum((m) => m.fileRss))} MiB, PSS ${mib(sum((m) => m.filePss))} MiB`,
    );
    // Each VM's RSS counts the snapshot pages it reads; PSS divides each shared page among its sharers. Were the
    // snapshot copied into each VM (or mapped privately and written), its PSS would equal its RSS.
    assert.ok(sum((m) => m.fileRss) > 0, 'the VMs map the snapshot memory');
    assert.ok(sum((m) => m.filePss) * 4 < sum((m) => m.fileRss), 'the snapshot pages are shared: their PSS is under a quarter of their RSS');
    for (const m of memory) assert.ok(m.fileSharedClean > 16 * 1024, `every VM maps shared clean snapshot pages (${mib(m.fileSharedClean)} MiB)`);
  });

  test('20 first executes at once from a client that never retries all succeed, each on a pooled VM', async () => {
    const fromPool: boolean[] = [];
    const onAcquired = ({ fromPool: pooled }: { fromPool: boolean }) => fromPool.push(pooled);
    engine.events.on('acquired', onAcquired);
    try {
      const started = performance.now();
      const results = await Promise.all(
        Array.from({ length: POOL }, async (_, i) => {
          const t0 = performance.now();
          // One request each, no retry: what the hosted service's published client does.
          const res = await call(server, 'POST', '/execute', { apiKey, json: { language: 'python', command: `print(${i} * 2)` } });
          const ms = performance.now() - t0;
          console.log(`execute ${i}: ${res.status} after ${ms.toFixed(0)} ms`);
          return { i, res, ms };
        }),
      );
      const times = results.map((r) => r.ms).sort((a, b) => a - b);
      console.log(`20 at once: p50 ${times[9]!.toFixed(0)} ms, slowest ${times[19]!.toFixed(0)} ms, all in ${(performance.now() - started).toFixed(0)} ms`);
      for (const { i, res } of results) {
        assert.equal(res.status, 200, `execute ${i}: ${res.text}`);
        assert.equal(res.body.stdout, `${i * 2}\n`, `execute ${i} printed its own result`);
      }
      assert.equal(fromPool.length, POOL, 'one VM acquired per execute');
      assert.deepEqual(fromPool, Array(POOL).fill(true), 'every VM came from the pool: none waited for a restore');
    } finally {
      engine.events.off('acquired', onAcquired);
    }
  });
});
