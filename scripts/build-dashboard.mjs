#!/usr/bin/env node
// Builds the web console (packages/dashboard) into its dist/, which the server serves at /, when its sources
// changed since the last build, compared by content hash. Run by scripts/setup.mjs; runnable alone:
//   node scripts/build-dashboard.mjs
// Plain JavaScript with no dependencies beyond Vite (installed with the workspace), like build-sdk.mjs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { filesHash, filesUnder, root, runAsScript } from './tsc-build.mjs';

const dashboard = path.join(root, 'packages', 'dashboard');
const dist = path.join(dashboard, 'dist');
// Beside the npm dependencies' own stamp, not in dist/, which the build empties.
const stamp = path.join(root, 'node_modules', '.sandboxd-dashboard-hash');

/**
 * Everything the build reads: the console's sources and config, the generated API types it is typed against,
 * and the lock file (which pins React, Vite and the rest).
 */
export function dashboardSourcesHash() {
  return filesHash([
    ...filesUnder(path.join(dashboard, 'src')),
    path.join(dashboard, 'index.html'),
    path.join(dashboard, 'viewer.html'),
    path.join(dashboard, 'vite.config.ts'),
    path.join(dashboard, 'package.json'),
    path.join(root, 'packages', 'sdk', 'src', 'generated', 'openapi.ts'),
    path.join(root, 'package-lock.json'),
  ]);
}

/** Builds dist/ unless it was built from these very sources; `step` prints a progress line. */
export function ensureDashboardBuilt(step = (message) => process.stderr.write(`${message}\n`)) {
  const hash = dashboardSourcesHash();
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === hash && fs.existsSync(path.join(dist, 'index.html'))) {
    step('web console (packages/dashboard): dist/ up to date');
    return false;
  }
  step('web console (packages/dashboard): building dist/ (vite, a few seconds)');
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: dashboard, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building the web console failed (vite exited with ${result.status ?? result.signal})`);
  fs.writeFileSync(stamp, hash);
  step('web console (packages/dashboard): dist/ built');
  return true;
}

runAsScript(import.meta.url, 'build-dashboard', () => ensureDashboardBuilt());
