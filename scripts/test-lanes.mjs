// Which lane a test file runs in (scripts/run-tests.mjs): heavy (one at a time) or light (beside it).
//
// 1. A comment `test-lane: heavy` or `test-lane: light` in the file's first 30 lines decides.
// 2. Otherwise the file is heavy when it, or any test-side file it imports (relative imports and
//    `new URL('./…', import.meta.url)` references that stay inside a `test/` folder, followed transitively),
//    carries the heavy marker or shows a sign of heavy work below. Source files (`src/`) are not followed: the
//    test decides what it starts, and `src/app.ts` imports everything.
// 3. Otherwise light.
//
// A heavy file may also say `test-order: last`: the heavy lane runs it after the others. That is for files that
// keep both cores busy on their own (Chromium in a VM under TCG): run beside the light lane, which is busy in
// the first minutes (the lint, the typecheck, ~90 small files), they take twice as long; at the end the heavy
// lane runs alone.
//
// The markers live on the shared helpers that start the heavy things (helpers/test-server.ts, processes.ts,
// postgres.ts, netns-web.ts, the VM, engine and agent fixtures), so a new test that uses one is heavy without
// saying so; the signs catch a test that starts one of those things by hand.
import fs from 'node:fs';
import path from 'node:path';

const MARKER = /test-lane:\s*(heavy|light)\b/;
const MARKER_LINES = 30;
const ORDER_MARKER = /test-order:\s*last\b/;

/** Signs of work that needs the machine: each names what it found, for `run-tests --list`. */
const HEAVY_SIGNS = [
  [/\bbuildApp\s*\(/, 'builds the app (its engine, listeners and egress enforcement)'],
  [/\bchromium\b|playwright/i, 'Chromium'],
  [/qemu-system|\bQemuDriver\b/, 'QEMU'],
  [/\bstartPostgres\b|\bpg_ctl\b|\binitdb\b/, 'PostgreSQL'],
  [/\bip\s+netns\b|\bunshare\b|\bnsenter\b/, 'a network namespace'],
  [/['"`]nft['"`]|\bnft\s+-/, 'nftables'],
];

const IMPORT_REFS = [
  /\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/g,
  /\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
  /\bimport\s+['"](\.{1,2}\/[^'"]+)['"]/g,
  /new URL\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*,\s*import\.meta\.url/g,
];

const cache = new Map();

function read(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function markerOf(text) {
  const head = text.split('\n', MARKER_LINES).join('\n');
  return head.match(MARKER)?.[1] ?? null;
}

function isTestSide(file) {
  return file.split(path.sep).includes('test');
}

/** The heavy reason of `file` itself or of the test-side files it reaches, or null. */
function heavyReason(file, seen) {
  if (seen.has(file)) return null;
  seen.add(file);
  if (cache.has(file)) return cache.get(file);
  const text = read(file);
  if (text === null) return null;
  const name = path.basename(file);
  let reason = null;
  const marker = markerOf(text);
  if (marker === 'heavy') reason = `marked heavy (${name})`;
  else if (marker !== 'light') {
    const sign = HEAVY_SIGNS.find(([pattern]) => pattern.test(text));
    if (sign) reason = `${sign[1]} (${name})`;
  }
  if (!reason && marker !== 'light') {
    for (const pattern of IMPORT_REFS) {
      for (const match of text.matchAll(pattern)) {
        const target = path.resolve(path.dirname(file), match[1]);
        if (!isTestSide(target)) continue;
        reason = heavyReason(target, seen);
        if (reason) break;
      }
      if (reason) break;
    }
  }
  cache.set(file, reason);
  return reason;
}

/**
 * The lane of one test file, whether it asks to run last in it, and why: `{ lane: 'heavy' | 'light', last, reason }`.
 * @param {string} file absolute path of a `.test.ts` file
 */
export function classifyTestFile(file) {
  const text = read(file) ?? '';
  const last = ORDER_MARKER.test(text.split('\n', MARKER_LINES).join('\n'));
  const marker = markerOf(text);
  if (marker) return { lane: marker, last, reason: 'its test-lane comment' };
  const reason = heavyReason(file, new Set());
  return reason ? { lane: 'heavy', last, reason } : { lane: 'light', last, reason: 'nothing heavy found' };
}
