#!/usr/bin/env node
// Bundles the guest agent (one file the guest image carries) and the desktop template's computer-use service,
// every time: esbuild takes well under a second. Run by scripts/setup.mjs and `npm run build`; runnable alone:
//   node scripts/build-agent.mjs
import { spawnSync } from 'node:child_process';
import { root, runAsScript } from './tsc-build.mjs';

function npmRun(script) {
  const result = spawnSync('npm', ['run', '--silent', script, '-w', '@sandboxd/agent'], { cwd: root, stdio: 'inherit' });
  if (result.error) throw new Error(`npm run ${script}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`npm run ${script} -w @sandboxd/agent exited with ${result.status ?? result.signal}`);
}

export function bundleAgent(step = (message) => process.stderr.write(`${message}\n`)) {
  npmRun('bundle');
  // The desktop template's computer-use service (packages/agent/src/desktop/), installed by the desktop image.
  npmRun('bundle:desktop');
  step('guest agent: bundled (and the desktop service)');
}

runAsScript(import.meta.url, 'build-agent', () => bundleAgent());
