/** Stateful Python through the real agent: state, results, tracebacks, deadlines, isolation, restarts. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AgentClient } from '../../src/agent/index.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

describe('agent python', () => {
  let agent: AgentFixture;
  let client: AgentClient;
  before(async () => {
    agent = await startAgent();
    client = await agent.connect();
  });
  after(() => agent.stop());

  it('keeps variables between runs and shows the last expression like Jupyter', async () => {
    const first = await client.runPython({ contextId: 'state', code: 'import math\nx = 20\ny = x * 2' });
    assert.equal(first.result, null);
    assert.equal(first.error, null);
    const second = await client.runPython({ contextId: 'state', code: 'x + y + 2' });
    assert.equal(second.result, '62');
    assert.equal(second.executionCount, 2);
    const none = await client.runPython({ contextId: 'state', code: 'print("side effect")' });
    assert.equal(none.result, null, 'a call returning None shows no result');
    assert.equal((await client.runPython({ contextId: 'state', code: "'text'" })).result, "'text'");
  });

  it('separates stdout, stderr and the exception with a traceback of the user code only', async () => {
    const code = ['import sys', 'print("to out")', 'print("to err", file=sys.stderr)', 'def boom():', '    raise ValueError("bad value")', 'boom()'].join('\n');
    const run = await client.runPython({ contextId: 'errors', code });
    assert.equal(run.stdout, 'to out\n');
    assert.equal(run.stderr, 'to err\n');
    assert.equal(run.error?.name, 'ValueError');
    assert.equal(run.error?.value, 'bad value');
    assert.match(run.error?.traceback ?? '', /File "<cell-1>", line 6, in <module>/);
    assert.match(run.error?.traceback ?? '', /line 5, in boom\n\s+raise ValueError\("bad value"\)/);
    assert.doesNotMatch(run.error?.traceback ?? '', /sandboxd|<string>/, 'kernel frames must not show');
  });

  it('reports syntax errors without kernel frames', async () => {
    const run = await client.runPython({ contextId: 'errors', code: 'def (' });
    assert.equal(run.error?.name, 'SyntaxError');
    assert.doesNotMatch(run.error?.traceback ?? '', /Traceback/);
  });

  it('captures output of subprocesses, in order with print', async () => {
    const run = await client.runPython({ contextId: 'sub', code: 'import os\nprint("a")\nos.system("echo b")\nprint("c")' });
    assert.equal(run.stdout, 'a\nb\nc\n');
  });

  it('interrupts code at the deadline and keeps the state', async () => {
    await client.runPython({ contextId: 'deadline', code: 'kept = "still here"' });
    const started = Date.now();
    const run = await client.runPython({ contextId: 'deadline', code: 'import time\nwhile True:\n    time.sleep(0.01)', timeoutMs: 300 });
    assert.ok(Date.now() - started < 3000);
    assert.equal(run.timedOut, true);
    assert.equal(run.error?.name, 'KeyboardInterrupt');
    assert.equal(run.kernelRestarted, false);
    assert.equal((await client.runPython({ contextId: 'deadline', code: 'kept' })).result, "'still here'");
  });

  it('kills an interpreter that ignores the interrupt, and starts a fresh one next time', async () => {
    await client.runPython({ contextId: 'stubborn', code: 'lost = 1' });
    const code = 'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)';
    const run = await client.runPython({ contextId: 'stubborn', code, timeoutMs: 200 });
    assert.equal(run.timedOut, true);
    assert.equal(run.kernelRestarted, true);
    assert.equal(run.error?.name, 'KernelDied');
    const next = await client.runPython({ contextId: 'stubborn', code: "'lost' in globals()" });
    assert.equal(next.result, 'False');
  });

  it('survives the interpreter exiting and reports it', async () => {
    const run = await client.runPython({ contextId: 'exit', code: 'import os\nos._exit(3)' });
    assert.equal(run.kernelRestarted, true);
    assert.match(run.error?.value ?? '', /exited with status 3/);
    assert.equal((await client.runPython({ contextId: 'exit', code: '1+1' })).result, '2');
  });

  it('isolates contexts and resets one on request', async () => {
    await client.runPython({ contextId: 'one', code: 'secret = 1' });
    const other = await client.runPython({ contextId: 'two', code: 'secret' });
    assert.equal(other.error?.name, 'NameError');
    assert.deepEqual(await client.resetPython('one'), { existed: true });
    assert.equal((await client.runPython({ contextId: 'one', code: 'secret' })).error?.name, 'NameError');
    assert.deepEqual(await client.resetPython('never-used'), { existed: false });
  });

  it('runs cells of one context in order and contexts in parallel', async () => {
    const runs = await Promise.all([
      client.runPython({ contextId: 'order', code: 'import time\ntime.sleep(0.2)\nsteps = ["a"]' }),
      client.runPython({ contextId: 'order', code: 'steps.append("b")\nsteps' }),
      client.runPython({ contextId: 'parallel', code: '"independent"' }),
    ]);
    assert.equal(runs[1].result, "['a', 'b']");
    assert.equal(runs[2].result, "'independent'");
  });

  it('supports top-level await', async () => {
    const run = await client.runPython({ contextId: 'async', code: 'import asyncio\nawait asyncio.sleep(0.01)\n"awaited"' });
    assert.equal(run.result, "'awaited'");
  });

  it('a spare run warms the pre-started interpreter without giving it state: the context that takes it starts clean at cell 1', async () => {
    const warm = await client.runPython({ contextId: 'ignored', code: 'import os\nleaked = 41\nprint(os.getpid(), leaked + 1)', spare: true });
    assert.equal(warm.error, null);
    assert.equal(warm.executionCount, 0, 'a spare run is not a cell');
    const [warmPid, answer] = warm.stdout.trim().split(' ');
    assert.equal(answer, '42');
    // The next new context takes that same interpreter, with nothing the warm-up defined.
    const first = await client.runPython({ contextId: 'after-warm', code: "import os\n(os.getpid(), 'leaked' in globals(), 'os' in globals())" });
    assert.equal(first.result, `(${warmPid}, False, True)`);
    assert.equal(first.executionCount, 1);
  });

  it('answers 1+1 in a few milliseconds once the interpreter is up', async () => {
    await client.runPython({ contextId: 'latency', code: '0' });
    const samples: number[] = [];
    for (let i = 0; i < 30; i++) {
      const started = performance.now();
      const run = await client.runPython({ contextId: 'latency', code: '1+1' });
      samples.push(performance.now() - started);
      assert.equal(run.result, '2');
    }
    samples.sort((a, b) => a - b);
    const median = samples[Math.floor(samples.length / 2)] as number;
    console.log(`python 1+1 round trip over the unix link: median ${median.toFixed(2)} ms, min ${(samples[0] as number).toFixed(2)} ms`);
    assert.ok(median < 50, `median ${median} ms`);
  });

  it('reports CPU time of a run', async () => {
    const run = await client.runPython({ contextId: 'cpu', code: 'sum(range(3_000_000))' });
    assert.ok(run.cpuMs !== null && run.cpuMs > 1, `cpuMs ${run.cpuMs}`);
  });
});
