#!/usr/bin/env node
// Runs shell commands at once and fails when any fails: `npm test` runs the lint and the typecheck side by side
// (each is one process on one core; one after the other they took ~56 s of a 2-core machine, side by side ~35 s).
// Each command's output is printed as one block when it ends, with how long it took.
//
//   node scripts/parallel.mjs "npm run lint" "npm run typecheck"
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const commands = process.argv.slice(2);
if (commands.length === 0) {
  console.error('usage: node scripts/parallel.mjs "<command>" …');
  process.exit(2);
}

const results = await Promise.all(
  commands.map(
    (command) =>
      new Promise((resolve) => {
        const started = performance.now();
        const child = spawn(command, {
          shell: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}) },
        });
        const chunks = [];
        child.stdout.on('data', (d) => chunks.push(d));
        child.stderr.on('data', (d) => chunks.push(d));
        child.on('close', (code, signal) => {
          const seconds = ((performance.now() - started) / 1000).toFixed(1);
          const output = Buffer.concat(chunks).toString();
          process.stdout.write(
            `${code === 0 ? '✔' : '✖'} ${command} (${seconds} s)${code === 0 ? '' : ` exited with ${code ?? signal}`}\n${output}${output && !output.endsWith('\n') ? '\n' : ''}`,
          );
          resolve(code === 0);
        });
      }),
  ),
);
process.exit(results.every(Boolean) ? 0 : 1);
