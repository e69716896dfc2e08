#!/usr/bin/env node
// `npm run build`: compiles every package to JavaScript — the client library, the MCP server and the CLI
// (dist/ each), the web console (Vite), the guest agent's bundles, the agent's protocol module, the server — and
// the HTTP API's reference page, each only when its sources changed since its last build (content hashes;
// `--force` builds all again).
// What `npm start`, the installed `sandboxd` and the Debian package run; tsx stays a development tool.
import fs from 'node:fs';
import path from 'node:path';
import { bundleAgent } from './build-agent.mjs';
import { ensureApiReferenceBuilt } from './build-api-docs.mjs';
import { ensureDashboardBuilt } from './build-dashboard.mjs';
import { ensureClientPackagesBuilt } from './build-sdk.mjs';
import { ensureServerCompiled } from './build-server.mjs';
import { root, runAsScript } from './tsc-build.mjs';

export function buildAll(step, { force = false } = {}) {
  if (!fs.existsSync(path.join(root, 'node_modules', 'typescript'))) {
    throw new Error('the npm dependencies are not installed: run npm install (or npm start, which installs them) first');
  }
  if (force) {
    for (const name of fs.readdirSync(path.join(root, 'node_modules'))) {
      if (/^\.sandboxd-.*-hash$/.test(name)) fs.rmSync(path.join(root, 'node_modules', name));
    }
  }
  ensureClientPackagesBuilt(step);
  ensureDashboardBuilt(step);
  bundleAgent(step);
  ensureServerCompiled(step);
  ensureApiReferenceBuilt(step);
}

runAsScript(import.meta.url, 'build', () => {
  const started = Date.now();
  const step = (message) => process.stderr.write(`[build +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
  buildAll(step, { force: process.argv.includes('--force') });
  step('built');
});
