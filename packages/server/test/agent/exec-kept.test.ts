/**
 * Kept execs through the real agent (protocol 1.8): a process started with `keep` outlives its stream (the host's
 * link goes away), its output is logged meanwhile, and a new connection lists it and re-attaches from the offsets it
 * has: output continues without a gap or a repeat, stdin and signals work on the new stream, and the exit is
 * delivered once. A plain exec still dies with its stream.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AgentOperationError, type AgentClient, type ExecHandle } from '../../src/agent/index.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';
import { waitUntil } from '../helpers/wait.ts';

/** Collects a handle's output as text, per stream. */
function gather(handle: ExecHandle): { stdout: () => string; stderr: () => string; done: Promise<void> } {
  let stdout = '';
  let stderr = '';
  const done = (async () => {
    for await (const event of handle.output) {
      if (event.type === 'stdout') stdout += event.data.toString();
      else stderr += event.data.toString();
    }
  })().catch(() => undefined);
  return { stdout: () => stdout, stderr: () => stderr, done };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('agent kept execs', () => {
  let agent: AgentFixture;
  before(async () => {
    agent = await startAgent(['--no-prestart-python']);
  });
  after(() => agent.stop());

  it('keeps a process whose stream went away, and a new stream continues its output, stdin and signals', async () => {
    const first: AgentClient = await agent.connect();
    const handle = first.exec({
      command: 'i=0; while [ $i -lt 400 ]; do i=$((i+1)); echo $i; echo e$i >&2; sleep 0.05; done; read line; echo "got $line"; sleep 30',
      shell: ['/bin/bash', '-c'],
      stdin: true,
      keep: true,
      info: { owner: 'test', n: 1 },
      timeoutMs: 120_000,
    });
    const started = await handle.started;
    assert.deepEqual({ stdoutOffset: started.stdoutOffset, stderrOffset: started.stderrOffset }, { stdoutOffset: 0, stderrOffset: 0 });
    const before = gather(handle);
    await waitUntil('a few lines', async () => (before.stdout().split('\n').length > 5 ? true : null), 20_000, 20);
    await first.close();
    await assert.rejects(handle.result);
    await before.done;
    const had = { stdoutOffset: Buffer.byteLength(before.stdout()), stderrOffset: Buffer.byteLength(before.stderr()) };
    // It runs on without a stream: its output goes into the log.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(alive(started.pid), 'the kept process survived its stream');

    const second = await agent.connect();
    const listed = await waitUntil(
      'the kept exec listed detached',
      async () => (await second.listKeptExecs()).find((exec) => exec.pid === started.pid && !exec.attached) ?? null,
      10_000,
      50,
    );
    assert.deepEqual(listed.info, { owner: 'test', n: 1 });
    assert.equal(listed.result, null);
    assert.ok(listed.stdoutBytes > had.stdoutOffset, 'output was logged while detached');

    const again = second.attachExec({ pid: started.pid, ...had });
    const from = await again.started;
    assert.deepEqual({ pid: from.pid, stdoutOffset: from.stdoutOffset, stderrOffset: from.stderrOffset }, { pid: started.pid, ...had });
    const rest = gather(again);
    // Both streams: stdout and stderr are separate pipes, so the last line of one may come before the other's.
    await waitUntil('the loop to finish', async () => (rest.stdout().includes('400\n') && rest.stderr().includes('e400\n') ? true : null), 60_000, 50);
    const numbers = (before.stdout() + rest.stdout()).trim().split('\n').map(Number);
    assert.deepEqual(
      numbers,
      Array.from({ length: 400 }, (_, index) => index + 1),
      'no line lost or repeated across the streams',
    );
    assert.equal((before.stderr() + rest.stderr()).trim().split('\n').length, 400);

    await again.writeStdin('hello\n');
    await waitUntil('stdin through the new stream', async () => (rest.stdout().includes('got hello\n') ? true : null), 10_000, 20);
    again.kill('SIGTERM');
    const result = await again.result;
    assert.equal(result.signal, 'SIGTERM');
    // Delivered: the agent forgets it.
    await waitUntil('collected', async () => ((await second.listKeptExecs()).some((exec) => exec.pid === started.pid) ? null : true), 5000, 20);
    await assert.rejects(second.attachExec({ pid: started.pid, stdoutOffset: 0, stderrOffset: 0 }).result, (error: unknown) => {
      assert.ok(error instanceof AgentOperationError);
      assert.equal(error.code, 'EXEC_NOT_FOUND');
      return true;
    });
  });

  it('keeps the exit of a process that ended while detached for the next attach, which replays from the oldest byte', async () => {
    const first = await agent.connect();
    const handle = first.exec({ command: 'echo one; sleep 1; echo two; exit 3', shell: ['/bin/sh', '-c'], keep: true });
    const { pid } = await handle.started;
    // The stream reset, as a link that goes away resets it (a graceful close would wait for the exit).
    handle.cancel();
    await assert.rejects(handle.result);
    await first.close();
    const second = await agent.connect();
    const ended = await waitUntil(
      'its end recorded',
      async () => (await second.listKeptExecs()).find((exec) => exec.pid === pid && exec.result) ?? null,
      10_000,
      50,
    );
    assert.equal(ended.result?.exitCode, 3);
    const { stdout, result } = await second.attachExec({ pid, stdoutOffset: 0, stderrOffset: 0 }).collect();
    assert.equal(stdout.toString(), 'one\ntwo\n');
    assert.equal(result.exitCode, 3);
    await second.close();
  });

  it('a new attach takes over from the previous one; the process keeps running', async () => {
    const client = await agent.connect();
    const handle = client.exec({ command: 'while true; do echo tick; sleep 0.1; done', shell: ['/bin/sh', '-c'], keep: true, timeoutMs: 60_000 });
    const { pid } = await handle.started;
    const takeover = client.attachExec({ pid, stdoutOffset: 0, stderrOffset: 0 });
    assert.equal((await takeover.started).pid, pid);
    await assert.rejects(handle.result, 'the first stream was ended by the attach');
    const output = gather(takeover);
    await waitUntil('output on the new stream', async () => (output.stdout().includes('tick') ? true : null), 5000, 20);
    takeover.kill('SIGKILL');
    assert.equal((await takeover.result).signal, 'SIGKILL');
    await client.close();
  });

  it('refuses an info that is not a small object, and still kills a plain exec with its stream', async () => {
    const client = await agent.connect();
    await assert.rejects(client.exec({ argv: ['true'], keep: true, info: { big: 'x'.repeat(5000) } }).result, { code: 'BAD_REQUEST' });
    const plain = client.exec({ command: 'exec sleep 30', shell: ['/bin/sh', '-c'] });
    const pid = await plain.pid;
    await client.close();
    await waitUntil('the plain exec killed', async () => (alive(pid) ? null : true), 5000, 20);
    const other = await agent.connect();
    assert.equal(
      (await other.listKeptExecs()).some((exec) => exec.pid === pid),
      false,
    );
    await other.close();
  });
});
