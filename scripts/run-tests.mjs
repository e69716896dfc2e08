#!/usr/bin/env node
// Runs every test file of every package, each in its own `node --test` (TypeScript through tsx), in two lanes:
//
//   heavy  files that boot VMs, start the app (it fills a warm pool), Chromium, PostgreSQL, a server process,
//          or touch the host's network (namespaces, nftables): one at a time, since under TCG a VM wants both
//          cores and these files share host state (the VM user's cgroups, routes, the snapshot cache).
//   light  unit and in-process files: beside the heavy lane, `cores - 1` at a time (all cores once the heavy
//          lane is done).
//
// How a file is classed (scripts/test-lanes.mjs): a `test-lane: heavy` or `test-lane: light` comment in its
// first lines decides; otherwise it is heavy when it, or a test file it imports (helpers, fixtures,
// transitively), carries the heavy marker or a sign of heavy work (Chromium, QEMU, PostgreSQL, `buildApp`,
// network namespaces). The shared heavy helpers (helpers/test-server.ts, processes.ts, postgres.ts, the VM and
// engine fixtures, netns-web.ts) carry the marker, so a new test that uses one lands in the heavy lane by
// itself. A light file that still runs long is named at the end, so a misclassed file cannot hide. Heavy files
// run in name order, except those marked `test-order: last` (Chromium in a VM keeps both cores busy: beside the
// busy start of the light lane it took twice as long), which run after the others.
//
// Each file's output is printed as one block when the file ends (never interleaved); heavy files also say when
// they start. At the end: the ten slowest files, the counts, and the failed files; the exit code is 1 when any
// file failed. Arguments:
//
//   node scripts/run-tests.mjs [filter…]   only files whose path contains one of the filters
//     --serial                             one file at a time, in path order (no light lane beside)
//     --jobs=<n>                           light files at once while the heavy lane runs (default: cores - 1)
//     --lane=heavy|light                   only that lane's files
//     --list                               print each file with its lane and why, run nothing
//     --times=<file.json>                  also write each file's duration, lane and counts as JSON
//     --also=<command>                     (repeatable) a shell command that must pass too, e.g. the lint: run first
//                                          in the light lane, beside the heavy lane, and reported like a file
//
// SANDBOXD_TEST_FILE_TIMEOUT_MINUTES (default 30): a file still running after that is killed and fails.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { classifyTestFile } from './test-lanes.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const flag = (name) => args.includes(`--${name}`);
const filters = args.filter((a) => !a.startsWith('--'));
/** Checks run as light jobs (`--also=…`): `npm test` runs the lint and the typecheck so, beside the first heavy files. */
const alsoCommands = args.filter((a) => a.startsWith('--also=')).map((a) => a.slice('--also='.length));
const cores = os.availableParallelism();
const serial = flag('serial');
const lightJobs = Math.max(1, Number(option('jobs') ?? cores - 1));
const laneFilter = option('lane');
const fileTimeoutMs = Number(process.env.SANDBOXD_TEST_FILE_TIMEOUT_MINUTES ?? 30) * 60_000;
/** A light file running longer than this is named at the end: it is probably heavy work in the wrong lane. */
const LIGHT_FILE_WARN_MS = 60_000;
/** A file alive this long after its last test is named at the end: its time is lost to an open handle. */
const LINGER_WARN_MS = 3_000;

function findTests(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : findTests(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const files = fs
  .readdirSync(path.join(root, 'packages'))
  .flatMap((pkg) => findTests(path.join(root, 'packages', pkg, 'test')))
  .map((f) => path.relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort()
  .map((file) => ({ file, ...classifyTestFile(path.join(root, file)) }))
  .filter((f) => !laneFilter || f.lane === laneFilter);

const checks = alsoCommands.map((command) => ({ file: command, lane: 'light', reason: 'a check (--also)', command }));
if (laneFilter !== 'heavy') files.unshift(...checks);

if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
if (flag('list')) {
  for (const f of files) console.log(`${f.lane.padEnd(5)}  ${f.file}  (${f.reason}${f.last ? '; runs last' : ''})`);
  process.exit(0);
}

const color = process.stdout.isTTY ? { FORCE_COLOR: '1' } : {};
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const running = new Set();
const results = [];
const started = performance.now();

/** One file under `node --test`, its stdout and stderr kept together in arrival order. */
function runFile(entry) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    // The agent's sources import its guest Python files as text, which tsx cannot load by itself.
    // Its own process group, so that a timeout or ^C ends the file's children (servers, QEMU) too.
    const options = { cwd: root, env: { ...process.env, ...color, SANDBOXD_TEST_LANE: entry.lane }, stdio: ['ignore', 'pipe', 'pipe'], detached: true };
    const child = entry.command
      ? spawn(entry.command, { ...options, shell: true })
      : spawn(process.execPath, ['--import', 'tsx', '--import', './packages/agent/tsx/register.mjs', '--test', '--test-reporter=spec', entry.file], options);
    running.add(child);
    const chunks = [];
    // When output last came before the runner's closing counts: a file that stays alive long after its last
    // test is held by something left open (a timer, a socket, a child process).
    const arrivals = [];
    const take = (d) => {
      chunks.push(d);
      arrivals.push({ at: performance.now(), closing: d.includes('ℹ tests ') });
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child, 'SIGKILL');
    }, fileTimeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      const output = Buffer.concat(chunks).toString();
      const ms = performance.now() - t0;
      const ok = code === 0 && !timedOut;
      const closing = arrivals.findIndex((a) => a.closing);
      const lingeredMs = closing > 0 ? arrivals[closing].at - arrivals[closing - 1].at : 0;
      const result = { ...entry, ms, ok, code, signal, timedOut, lingeredMs, counts: parseCounts(output), failing: failingTests(output) };
      results.push(result);
      printBlock(result, output);
      resolve(result);
    });
  });
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** The spec reporter's closing counts (`ℹ tests 12`, `ℹ pass 11`, …). */
function parseCounts(output) {
  const counts = {};
  for (const name of ['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo']) {
    const match = output.match(new RegExp(`^(?:\\x1b\\[[0-9;]*m)?ℹ ${name} (\\d+)`, 'm'));
    counts[name] = match ? Number(match[1]) : 0;
  }
  return counts;
}

/**
 * The failing tests under the reporter's "failing tests" section, each with the first lines of its error (without
 * the stack): the closing summary repeats them, because a CI log is often read from its end only.
 */
function failingTests(output) {
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const at = plain.indexOf('✖ failing tests:');
  if (at < 0) return [];
  const failures = new Map();
  let current = null;
  for (const line of plain.slice(at).split('\n').slice(1)) {
    if (/^\s*✖ /.test(line)) {
      const name = line.trim().replace(/ \([\d.]+ms\)$/, '');
      current = failures.has(name) ? null : { name, why: [] };
      if (current) failures.set(name, current);
    } else if (/^test at /.test(line)) current = null;
    else if (current && current.why.length < ERROR_LINES && line.trim() !== '' && !/^\s+at /.test(line)) current.why.push(line.trim().slice(0, 300));
  }
  return [...failures.values()];
}

/** How many lines of each failure's error the closing summary repeats. */
const ERROR_LINES = 12;

/** The reporter's closing count lines, which the block's header line replaces. */
// eslint-disable-next-line no-control-regex
const COUNT_LINE = /^(?:\x1b\[[0-9;]*m)?ℹ (?:tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+(?:\x1b\[[0-9;]*m)?$/;

function printBlock(result, output) {
  const mark = result.ok ? '✔' : '✖';
  const why = result.timedOut ? ` — killed after ${seconds(fileTimeoutMs)}` : !result.ok ? ` — exit ${result.code ?? result.signal}` : '';
  const { tests, fail } = result.counts;
  const body = output
    .split('\n')
    .filter((line) => !COUNT_LINE.test(line))
    .join('\n')
    .replace(/\n*$/, '\n');
  process.stdout.write(`\n━━ ${mark} ${result.file}  [${result.lane}, ${seconds(result.ms)}, ${tests} tests${fail ? `, ${fail} failed` : ''}]${why}\n${body}`);
}

async function runLanes() {
  // Files that keep both cores busy on their own (`test-order: last`) wait until the light lane is done.
  const heavy = [...files.filter((f) => f.lane === 'heavy' && !f.last), ...files.filter((f) => f.lane === 'heavy' && f.last)];
  const light = files.filter((f) => f.lane === 'light');
  if (serial) {
    for (const f of files) if (!interrupted) await runFile(f);
    return;
  }
  let heavyDone = heavy.length === 0;
  const heavyLane = (async () => {
    for (const f of heavy) {
      if (interrupted) break;
      process.stdout.write(`\n▷ ${f.file}  [heavy] started at ${seconds(performance.now() - started)}\n`);
      await runFile(f);
    }
    heavyDone = true;
  })();
  // Light workers: `lightJobs` beside the heavy lane; once it is done, one per core.
  let next = 0;
  const worker = async (index) => {
    while (next < light.length && !interrupted) {
      if (!heavyDone && index >= lightJobs) {
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      await runFile(light[next++]);
    }
  };
  await Promise.all([heavyLane, ...Array.from({ length: Math.max(lightJobs, cores) }, (_, i) => worker(i))]);
}

function summary() {
  const wallMs = performance.now() - started;
  const total = (key) => results.reduce((sum, r) => sum + r.counts[key], 0);
  const laneMs = (lane) => results.filter((r) => r.lane === lane).reduce((sum, r) => sum + r.ms, 0);
  const slowest = results
    .filter((r) => !r.command)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 10);
  const out = [];
  out.push('', '━━ the ten slowest files');
  for (const r of slowest) out.push(`  ${seconds(r.ms).padStart(8)}  ${r.lane.padEnd(5)}  ${r.counts.tests} tests  ${r.file}`);
  const slowLight = results.filter((r) => r.lane === 'light' && !r.command && r.ms > LIGHT_FILE_WARN_MS);
  if (slowLight.length) {
    out.push('', `━━ light files that ran over ${seconds(LIGHT_FILE_WARN_MS)} (heavy work? mark them \`test-lane: heavy\`):`);
    for (const r of slowLight) out.push(`  ${seconds(r.ms).padStart(8)}  ${r.file}`);
  }
  const lingering = results.filter((r) => r.lingeredMs > LINGER_WARN_MS);
  if (lingering.length) {
    out.push('', `━━ files that stayed alive over ${seconds(LINGER_WARN_MS)} after their last test (an open timer, socket or child process holds them):`);
    for (const r of lingering) out.push(`  ${seconds(r.lingeredMs).padStart(8)}  ${r.file}`);
  }
  const failed = results.filter((r) => !r.ok);
  const notRun = files.length - results.length;
  out.push(
    '',
    `━━ ${results.filter((r) => !r.command).length} files${checks.length ? ` and ${results.filter((r) => r.command).length} checks (${checks.map((c) => c.command).join(', ')})` : ''}, ${total('tests')} tests: ${total('pass')} passed, ${total('fail')} failed, ${total('cancelled')} cancelled, ${total('skipped')} skipped, ${total('todo')} todo` +
      (notRun ? `; ${notRun} files not run` : ''),
    `   wall ${seconds(wallMs)} · heavy lane ${seconds(laneMs('heavy'))} (${results.filter((r) => r.lane === 'heavy').length} files, one at a time) · light lane ${seconds(laneMs('light'))} (${results.filter((r) => r.lane === 'light').length} files and checks, ${serial ? 1 : lightJobs} at a time beside the heavy lane)`,
  );
  if (failed.length) {
    out.push('', `━━ ✖ ${failed.length} files or checks failed:`);
    for (const r of failed) {
      out.push(`  ${r.file}${r.timedOut ? ` (killed after ${seconds(fileTimeoutMs)})` : ''}`);
      for (const { name, why } of r.failing) {
        out.push(`      ${name}`);
        for (const line of why) out.push(`          ${line}`);
      }
    }
  }
  console.log(out.join('\n'));
  const timesFile = option('times');
  if (timesFile) {
    const rows = results.map(({ file, lane, ms, ok, lingeredMs, counts }) => ({
      file,
      lane,
      ms: Math.round(ms),
      lingeredMs: Math.round(lingeredMs),
      ok,
      ...counts,
    }));
    fs.writeFileSync(timesFile, JSON.stringify({ wallMs: Math.round(wallMs), files: rows.sort((a, b) => b.ms - a.ms) }, null, 1));
  }
  return failed.length === 0 && notRun === 0;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\nrun-tests: ${signal}: stopping ${running.size} running files\n`);
    for (const child of running) killGroup(child, 'SIGTERM');
    setTimeout(() => {
      for (const child of running) killGroup(child, 'SIGKILL');
    }, 10_000).unref();
  });
}

try {
  await runLanes();
} finally {
  const passed = summary();
  process.exitCode = passed && !interrupted ? 0 : 1;
}
