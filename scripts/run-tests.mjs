#!/usr/bin/env node
// Runs every test file of every package with Node's test runner (TypeScript through tsx), one file at a
// time: the VM tests need both cores, and file order stays stable. Extra arguments filter file paths.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const filters = process.argv.slice(2);

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
  .sort();

if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  // The agent's sources import its guest Python files as text, which tsx cannot load by itself.
  ['--import', 'tsx', '--import', './packages/agent/tsx/register.mjs', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
  { stdio: 'inherit', cwd: root },
);
process.exit(result.status ?? 1);
