#!/usr/bin/env node
// Builds the published client packages' dist/ (what plain Node.js loads: `import('@sandboxd/sdk')`,
// `import('@sandboxd/mcp')`, the `sandbox` command's bin/sandbox.mjs) when their sources changed since the last
// build, compared by content hash (scripts/tsc-build.mjs). In dependency order: the SDK, then the MCP server (its
// types of the SDK come from the SDK's dist/), then the CLI (over both). Run by `npm run build` (and so by
// scripts/setup.mjs) and by each package's `npm pack` (prepack); runnable alone:
//   node scripts/build-sdk.mjs [sdk|mcp|cli …]     the packages named and what they need; all three by default
// Plain JavaScript with no dependencies beyond TypeScript, like setup.mjs.
import path from 'node:path';
import { ensureCompiled, inputsHash, root, runAsScript } from './tsc-build.mjs';

/** The packages built, in build order; `needs` are the ones whose dist/ the build reads. */
const PACKAGES = {
  sdk: { label: 'client library (@sandboxd/sdk)', needs: [] },
  mcp: { label: 'MCP server (@sandboxd/mcp)', needs: ['sdk'] },
  cli: { label: 'command-line tool (@sandboxd/cli)', needs: ['sdk', 'mcp'] },
};

/** What `tsc-build.mjs` hashes for a package: its sources, its build tsconfig and manifest, and what it is built against. */
function buildInputs(name) {
  const dir = path.join(root, 'packages', name);
  return {
    tsconfig: path.join(dir, 'tsconfig.build.json'),
    sourceDirs: [path.join(dir, 'src')],
    files: [path.join(dir, 'package.json')],
    // A change to the SDK rebuilds the MCP server and the CLI.
    extra: PACKAGES[name].needs.map((needed) => `${needed}:${packageSourcesHash(needed)}`).join('\n'),
  };
}

/** The content hash a package's build is stamped with (its stamp: node_modules/.sandboxd-<name>-hash). */
export function packageSourcesHash(name) {
  const { tsconfig, sourceDirs, files, extra } = buildInputs(name);
  return inputsHash({ sourceDirs, files: [tsconfig, ...files], extra });
}

/** Builds one package's dist/ unless it was built from these very sources; `step` prints a progress line. */
export function ensurePackageBuilt(name, step = (message) => process.stderr.write(`${message}\n`)) {
  const dir = path.join(root, 'packages', name);
  return ensureCompiled({ label: PACKAGES[name].label, outDir: path.join(dir, 'dist'), stampName: name, step, ...buildInputs(name) });
}

/** Everything the SDK's build reads (see packageSourcesHash). */
export const sdkSourcesHash = () => packageSourcesHash('sdk');
/** The SDK's dist/ (what `import('@sandboxd/sdk')` loads under plain Node.js, and what the server runs). */
export const ensureSdkBuilt = (step) => ensurePackageBuilt('sdk', step);

/** The packages named (default: all three) and those they are built against, in build order; true when any was built. */
export function ensureClientPackagesBuilt(step, names = Object.keys(PACKAGES)) {
  for (const name of names) if (!PACKAGES[name]) throw new Error(`no package "${name}" here (${Object.keys(PACKAGES).join(', ')})`);
  const wanted = new Set(names.flatMap((name) => [...PACKAGES[name].needs, name]));
  return Object.keys(PACKAGES)
    .filter((name) => wanted.has(name))
    .map((name) => ensurePackageBuilt(name, step))
    .some(Boolean);
}

// node scripts/build-sdk.mjs [sdk|mcp|cli …]: those (with what they need), else all three.
runAsScript(import.meta.url, 'build-sdk', () => {
  const names = process.argv.slice(2);
  ensureClientPackagesBuilt(undefined, names.length > 0 ? names : undefined);
});
