/**
 * The kernel's rich results and a context's working directory, with the host's python3 (no VM): what `display()`
 * shows, the last value in every format it has (IPython's `_repr_*_` methods), in order, failing representation
 * methods skipped, and a context's `cwd` applied only when its interpreter starts.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { KernelPool } from '../src/python/kernel-pool.ts';

const TABLE_CLASS = [
  'class Table:',
  '    def __repr__(self): return "Table()"',
  '    def _repr_html_(self): return "<table><tr><td>1</td></tr></table>"',
  '    def _repr_png_(self): return b"\\x89PNG fake"',
  '    def _repr_markdown_(self): raise RuntimeError("no markdown today")',
  '    def _repr_json_(self): return {"rows": 1}',
].join('\n');

describe('rich Python results (host python3)', () => {
  const pool = new KernelPool({
    pythonCommand: 'python3',
    cwd: '/',
    env: process.env,
    interruptGraceMs: 2000,
    markerWaitMs: 1000,
    prestart: false,
    maxContexts: 4,
  });
  after(() => pool.close());

  test('display() first, then the last value in each of its formats; a failing format is left out', async () => {
    await pool.run('a', TABLE_CLASS);
    const run = await pool.run('a', 'display("shown", 42)\nTable()');
    assert.equal(run.error, null);
    assert.equal(run.result, 'Table()');
    assert.deepEqual(run.results, [
      { text: "'shown'", isMainResult: false },
      { text: '42', isMainResult: false },
      {
        text: 'Table()',
        html: '<table><tr><td>1</td></tr></table>',
        png: Buffer.from('\x89PNG fake', 'latin1').toString('base64'),
        json: { rows: 1 },
        isMainResult: true,
      },
    ]);
  });

  test('a failing __repr__ is the run error, as in a plain interpreter; None and statements make no result', async () => {
    const failed = await pool.run('a', 'class Bad:\n    def __repr__(self): raise ValueError("nope")\nBad()');
    assert.equal(failed.error?.name, 'ValueError');
    assert.deepEqual(failed.results, []);
    assert.deepEqual((await pool.run('a', 'x = 1\nNone')).results, []);
  });

  test("a run's results are its own: nothing of an earlier run's carries over", async () => {
    await pool.run('a', 'display("earlier")');
    const quiet = await pool.run('a', '1 + 1');
    assert.deepEqual(quiet.results, [{ text: '2', isMainResult: true }]);
  });

  test('a context starts in its cwd; the directory is not forced on it again', async () => {
    const first = await pool.run('b', 'import os\nos.getcwd()', { cwd: '/tmp' });
    assert.equal(first.result, "'/tmp'");
    await pool.run('b', 'os.chdir("/")');
    assert.equal((await pool.run('b', 'os.getcwd()', { cwd: '/tmp' })).result, "'/'");
    const missing = await pool.run('c', '1', { cwd: '/does/not/exist' });
    assert.equal(missing.error?.name, 'FileNotFoundError');
  });
});
