#!/usr/bin/env node
// Builds the client library's dist/ (what `import('@sandboxd/sdk')` loads under plain Node.js) when its
// sources changed since the last build, compared by content hash. Run by scripts/setup.mjs; runnable alone:
//   node scripts/build-sdk.mjs
// Plain JavaScript with no dependencies beyond TypeScript, like setup.mjs.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sdk = path.join(root, 'packages', 'sdk');
const dist = path.join(sdk, 'dist');
// Beside the npm dependencies' own stamp, not in dist/, which `npm pack` publishes.
const stamp = path.join(root, 'node_modules', '.sandboxd-sdk-hash');

function filesUnder(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)]))
    .sort();
}

/** Everything the build reads: the sources, both tsconfigs, the package manifest, the compiler's version. */
export function sdkSourcesHash() {
  const hash = createHash('sha256');
  const inputs = [
    ...filesUnder(path.join(sdk, 'src')),
    path.join(sdk, 'tsconfig.build.json'),
    path.join(root, 'tsconfig.base.json'),
    path.join(sdk, 'package.json'),
    path.join(root, 'node_modules', 'typescript', 'package.json'),
  ];
  for (const file of inputs) hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  return hash.digest('hex');
}

/** Builds dist/ unless it was built from these very sources; `step` prints a progress line. */
export function ensureSdkBuilt(step = (message) => process.stderr.write(`${message}\n`)) {
  const hash = sdkSourcesHash();
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === hash) {
    step('client library (@sandboxd/sdk): dist/ up to date');
    return false;
  }
  step('client library (@sandboxd/sdk): building dist/ (tsc, a few seconds)');
  // A clean build: files of deleted sources must not linger in what `import` and `npm pack` see.
  fs.rmSync(dist, { recursive: true, force: true });
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(sdk, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building @sandboxd/sdk failed (tsc exited with ${result.status ?? result.signal})`);
  fs.writeFileSync(stamp, hash);
  step('client library (@sandboxd/sdk): dist/ built');
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    ensureSdkBuilt();
  } catch (error) {
    process.stderr.write(`[build-sdk] ${error.message}\n`);
    process.exit(1);
  }
}
