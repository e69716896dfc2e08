/**
 * Streaming benchmark (issue 33), through a real server process and the TypeScript SDK on a real VM:
 * - a large file (1 GiB by default, BENCH_FILE_MIB) made in the VM, downloaded to disk (`downloadStream`) and
 *   uploaded back from disk (`fs.openAsBlob`), byte-exact (sha256 in the VM and here), with the time of each way and
 *   the peak resident memory of the client (this process) and of the server process during each (their `VmHWM`,
 *   reset before each way through `/proc/<pid>/clear_refs`, so the figure is the transfer's peak, not the
 *   start-up's);
 * - the latency of a streamed line: a line written to the stdin of `cat` in the VM comes back on the process's
 *   NDJSON output stream; the round trip (host → agent → process → agent → host) bounds the one-way time of a line
 *   printed in the VM from above (the guest's and the host's clocks are not compared);
 * - the latency of a directory watch: a directory made through the API (`mkdir`) is seen as a `create` event on a
 *   watch of its parent; the time from sending the request to the event bounds the event's own delay from above,
 *   beside the request's own round trip;
 * - the latency of Python's output in a streamed execute: the code prints the guest's clock every 0.1 s, and each
 *   line's arrival is compared with it, the clocks' offset taken from the quickest of a few plain executes that
 *   read the guest's clock, before and after (Cristian's algorithm: the offset is known to within half that
 *   execute's round trip, reported beside it; the guest's clock drifts under TCG, so the offset is interpolated).
 * `npm run bench:files` (root, a quiet host); ends with one JSON line.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Sandboxd } from '../packages/sdk/src/index.ts';
import { startServerProcess } from '../packages/server/test/helpers/processes.ts';
import { percentile } from './first-result.ts';

const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 1024);
const LINES = Number(process.env.BENCH_LINES ?? 50);
const WATCH_CHANGES = Number(process.env.BENCH_WATCH_CHANGES ?? 30);
const log = (message: string) => process.stderr.write(`[bench:files] ${message}\n`);
const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Peak resident memory of a process since its last reset, in bytes (`VmHWM`). */
function peakRss(pid: number | 'self'): number {
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kib) throw new Error(`no VmHWM for process ${pid}`);
  return Number(kib) * 1024;
}

/** Starts a new peak at the current resident size (Linux: "5" to clear_refs resets VmHWM). */
function resetPeak(pid: number | 'self'): void {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-files-'));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-files-local-'));
  const server = await startServerProcess({
    SANDBOXD_DATA_DIR: dataDir,
    SANDBOXD_POOL_SIZE: '0',
    SANDBOXD_WARM_VCPUS: '1',
    SANDBOXD_UPLOAD_LIMIT_BYTES: String(Math.max(FILE_MIB * 2, 2048) * 2 ** 20),
  });
  const serverPid = server.process.pid!;
  const client = new Sandboxd({ baseUrl: server.baseUrl, apiKey: fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim() });
  const results: Record<string, number> = { file_mib: FILE_MIB };
  try {
    log('starting a session (its VM is restored on the first call)');
    const session = await client.sessions.create({ vcpuCount: 1 });
    const inVm = async (command: string) => {
      const result = await session.execute(command, { language: 'bash', timeout: 600 });
      if (result.exit_code !== 0) throw new Error(`${command}: ${result.stderr}`);
      return result.stdout.trim();
    };
    log(`the VM writes ${FILE_MIB} MiB of random bytes to /root/big.bin (not measured)`);
    const madeHash = (await inVm(`head -c ${FILE_MIB}M /dev/urandom > /root/big.bin && sha256sum /root/big.bin`)).split(' ')[0];

    // Download first: each way's peak is then its own (a process rarely gives memory back once it grew).
    resetPeak('self');
    resetPeak(serverPid);
    results.client_rss_before_mib = mib(peakRss('self'));
    results.server_rss_before_mib = mib(peakRss(serverPid));
    log(`download of ${FILE_MIB} MiB to disk`);
    const local = path.join(scratch, 'big.bin');
    let started = performance.now();
    await pipeline(Readable.fromWeb((await session.downloadStream('/root/big.bin')) as WebReadableStream<Uint8Array>), fs.createWriteStream(local));
    results.download_s = Math.round(performance.now() - started) / 1000;
    results.download_mib_per_s = Math.round(FILE_MIB / results.download_s);
    results.download_client_peak_rss_mib = mib(peakRss('self'));
    results.download_server_peak_rss_mib = mib(peakRss(serverPid));
    const received = createHash('sha256');
    await pipeline(fs.createReadStream(local), received);
    if (received.digest('hex') !== madeHash) throw new Error('the file downloaded differs from the one in the VM');

    resetPeak('self');
    resetPeak(serverPid);
    log(`upload of ${FILE_MIB} MiB from disk`);
    started = performance.now();
    const uploaded = await session.upload(await fs.openAsBlob(local), '/root/back.bin');
    results.upload_s = Math.round(performance.now() - started) / 1000;
    if (uploaded.size !== FILE_MIB * 2 ** 20) throw new Error(`uploaded ${uploaded.size} bytes, expected ${FILE_MIB * 2 ** 20}`);
    results.upload_mib_per_s = Math.round(FILE_MIB / results.upload_s);
    results.upload_client_peak_rss_mib = mib(peakRss('self'));
    results.upload_server_peak_rss_mib = mib(peakRss(serverPid));
    if ((await inVm('sha256sum /root/back.bin')).split(' ')[0] !== madeHash) throw new Error('the file uploaded differs from the one sent');
    await inVm('rm -f /root/big.bin /root/back.bin');

    log(`${LINES} lines through cat's stdin and back on its output stream`);
    const cat = await session.processes.start(null, { argv: ['cat'], stdin: true });
    const abort = new AbortController();
    const arrivals: string[] = [];
    let wake: (() => void) | undefined;
    const reading = (async () => {
      let pending = '';
      for await (const event of session.processes.output(cat.process_id, { signal: abort.signal })) {
        if (event.type !== 'stdout' || !event.data) continue;
        pending += event.data;
        let newline: number;
        while ((newline = pending.indexOf('\n')) >= 0) {
          arrivals.push(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
          wake?.();
        }
      }
    })().catch(() => undefined);
    const roundTrips: number[] = [];
    for (let i = 0; i < LINES; i++) {
      const arrived = new Promise<void>((resolve) => (wake = resolve));
      const sentAt = performance.now();
      await session.processes.sendStdin(cat.process_id, `line ${i}\n`);
      await arrived;
      roundTrips.push(performance.now() - sentAt);
      if (arrivals.at(-1) !== `line ${i}`) throw new Error(`expected "line ${i}", got ${JSON.stringify(arrivals.at(-1))}`);
    }
    abort.abort();
    await reading;
    await session.processes.kill(cat.process_id);
    results.line_round_trip_p50_ms = Math.round(percentile(roundTrips, 50) * 10) / 10;
    results.line_round_trip_p90_ms = Math.round(percentile(roundTrips, 90) * 10) / 10;

    log(`watch: ${WATCH_CHANGES} directories made through the API, each seen on a watch of their parent`);
    await session.mkdir('/tmp/watched');
    const watchAbort = new AbortController();
    const created = new Map<string, number>();
    let watchStarted: () => void = () => undefined;
    const watchReady = new Promise<void>((resolve) => (watchStarted = resolve));
    let onCreate: (() => void) | undefined;
    const watching = (async () => {
      for await (const event of session.watch('/tmp/watched', { signal: watchAbort.signal })) {
        if (event.type === 'start') watchStarted();
        if (event.type === 'create' && event.path) {
          created.set(event.path, performance.now());
          onCreate?.();
        }
      }
    })().catch(() => undefined);
    await watchReady;
    const eventMs: number[] = [];
    const callMs: number[] = [];
    for (let i = 0; i < WATCH_CHANGES; i++) {
      const target = `/tmp/watched/d${i}`;
      const seen = new Promise<void>((resolve) => (onCreate = () => created.has(target) && resolve()));
      const sentAt = performance.now();
      await session.mkdir(target);
      callMs.push(performance.now() - sentAt);
      await seen;
      eventMs.push(created.get(target)! - sentAt);
    }
    watchAbort.abort();
    await watching;
    results.watch_event_p50_ms = Math.round(percentile(eventMs, 50) * 10) / 10;
    results.watch_event_p90_ms = Math.round(percentile(eventMs, 90) * 10) / 10;
    results.watch_change_call_p50_ms = Math.round(percentile(callMs, 50) * 10) / 10;

    log(`python: ${LINES} lines printed 0.1 s apart with the guest's clock, in a streamed execute`);
    // The guest's clock drifts from the host's under TCG: its offset is measured before and after the streamed run
    // and taken as moving linearly in between.
    const clockOffset = async () => {
      let best = { roundTripMs: Infinity, offsetMs: 0, atMs: 0 };
      for (let i = 0; i < 7; i++) {
        const sent = Date.now();
        const answer = await session.execute('import time\ntime.time()');
        const received = Date.now();
        const guestMs = Number(answer.results.at(-1)?.text) * 1000;
        if (received - sent < best.roundTripMs) best = { roundTripMs: received - sent, offsetMs: guestMs - (sent + received) / 2, atMs: (sent + received) / 2 };
      }
      return best;
    };
    const before = await clockOffset();
    const printed: { guestMs: number; arrivedMs: number }[] = [];
    let pending = '';
    await session.execute(`import sys, time\nfor i in range(${LINES}):\n    sys.stdout.write(repr(time.time()) + "\\n")\n    time.sleep(0.1)`, {
      timeoutMs: 120_000,
      onStdout: (text) => {
        const arrivedMs = Date.now();
        pending += text;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) printed.push({ guestMs: Number(line) * 1000, arrivedMs });
      },
    });
    const after = await clockOffset();
    const offsetAt = (atMs: number) => before.offsetMs + ((after.offsetMs - before.offsetMs) * (atMs - before.atMs)) / (after.atMs - before.atMs);
    const lineMs = printed.map(({ guestMs, arrivedMs }) => arrivedMs - (guestMs - offsetAt(arrivedMs)));
    results.python_line_clock_drift_ms = Math.round(after.offsetMs - before.offsetMs);
    results.python_line_p50_ms = Math.round(percentile(lineMs, 50) * 10) / 10;
    results.python_line_p90_ms = Math.round(percentile(lineMs, 90) * 10) / 10;
    results.python_line_clock_uncertainty_ms = Math.round(Math.max(before.roundTripMs, after.roundTripMs) / 2);
    await session.kill();
  } finally {
    await server.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  log(
    `upload ${results.upload_s} s (${results.upload_mib_per_s} MiB/s; peak RSS client ${results.upload_client_peak_rss_mib} MiB, server ${results.upload_server_peak_rss_mib} MiB); ` +
      `download ${results.download_s} s (${results.download_mib_per_s} MiB/s; client ${results.download_client_peak_rss_mib} MiB, server ${results.download_server_peak_rss_mib} MiB); ` +
      `line round trip p50 ${results.line_round_trip_p50_ms} ms, p90 ${results.line_round_trip_p90_ms} ms; ` +
      `watch event p50 ${results.watch_event_p50_ms} ms, p90 ${results.watch_event_p90_ms} ms after the change's request was sent (the request itself: ${results.watch_change_call_p50_ms} ms p50); ` +
      `a Python line p50 ${results.python_line_p50_ms} ms, p90 ${results.python_line_p90_ms} ms after it was printed (± ${results.python_line_clock_uncertainty_ms} ms: the clocks' offset)`,
  );
  console.log(JSON.stringify(results));
}

await main();
