/**
 * The Python client's static checks, which need no server (test-lane: light): mypy (strict, as
 * clients/python/pyproject.toml configures it) over the package and its typed example, so the answers' attributes
 * are checked as a user's code would be; then pyflakes and black, as `npm run lint` checks the agent's Python.
 * The client's behaviour against a real server is python-client.test.ts (heavy).
 * Needs mypy, pyflakes3, black, python3-httpx and python3-websockets (scripts/setup.mjs installs them for tests).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const CLIENT = path.join(REPOSITORY, 'clients/python');

interface Ran {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve, reject) => {
    // No __pycache__ in the work tree.
    const child = spawn(command, args, { cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('the Python client, checked without a server', () => {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-mypy-'));
  after(() => fs.rmSync(cache, { recursive: true, force: true }));

  test('mypy --strict passes over the package and its typed example (the settings of pyproject.toml)', { timeout: 180_000 }, async () => {
    // The cache outside the work tree: a fresh one each run.
    const ran = await run('mypy', ['--cache-dir', cache], CLIENT);
    assert.equal(ran.code, 0, ran.output);
    assert.match(ran.output, /^Success: no issues found in \d+ source files$/m);
    const config = fs.readFileSync(path.join(CLIENT, 'pyproject.toml'), 'utf8');
    assert.match(config, /^strict = true$/m, 'strict mode');
    assert.match(config, /^files = \["src\/sandboxd", "examples"\]$/m, 'the package and the example');
  });

  test('mypy finds a misspelt field of an answer, a wrong type and a missing argument', { timeout: 180_000 }, async () => {
    // What the typed answers are for: the same mistakes in a user's program are errors before it runs.
    const program = path.join(cache, 'wrong_usage.py');
    fs.writeFileSync(
      program,
      [
        'from sandboxd import Sandboxd',
        'session = Sandboxd().sessions.create()',
        'result = session.execute("1")',
        'print(result.stdoutt)',
        'count: int = result.stdout',
        'print(result.results[0].pngg)',
        'session.upload()',
        '',
      ].join('\n'),
    );
    const ran = await run('mypy', ['--cache-dir', cache, '--strict', '--no-warn-return-any', '--python-version', '3.9', program], CLIENT);
    assert.equal(ran.code, 1, ran.output);
    assert.match(ran.output, /wrong_usage\.py:4: error: "ExecuteResponse" has no attribute "stdoutt"/);
    assert.match(ran.output, /wrong_usage\.py:5: error: Incompatible types in assignment/);
    assert.match(ran.output, /wrong_usage\.py:6: error: "RichResult" has no attribute "pngg"/);
    assert.match(ran.output, /wrong_usage\.py:7: error: Missing positional arguments/);
    assert.match(ran.output, /Found 4 errors in 1 file/);
  });

  test("its sources pass pyflakes and black, as `npm run lint` checks the agent's Python", async () => {
    const flakes = await run('pyflakes3', ['clients/python/src', 'clients/python/scripts', 'clients/python/tests', 'clients/python/examples'], REPOSITORY);
    assert.equal(flakes.code, 0, flakes.output);
    // black reads clients/python/pyproject.toml: 120 columns, the generated modules left out.
    const formatted = await run('black', ['--check', 'clients/python'], REPOSITORY);
    assert.equal(formatted.code, 0, formatted.output);
  });
});
