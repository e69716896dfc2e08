/** exec through the real agent: exit codes, output, stdin, deadlines, signals, concurrency, CPU time. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AgentOperationError, type AgentClient } from '../../src/agent/index.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

describe('agent exec', () => {
  let agent: AgentFixture;
  let client: AgentClient;
  before(async () => {
    agent = await startAgent(['--no-prestart-python']);
    client = await agent.connect();
  });
  after(() => agent.stop());

  it('reports the exit code and separates stdout from stderr', async () => {
    const { stdout, stderr, result } = await client.exec({ command: 'echo out; echo err >&2; exit 7', shell: ['/bin/sh', '-c'] }).collect();
    assert.equal(stdout.toString(), 'out\n');
    assert.equal(stderr.toString(), 'err\n');
    assert.equal(result.exitCode, 7);
    assert.equal(result.signal, null);
    assert.equal(result.timedOut, false);
  });

  it('runs argv without a shell and looks the program up in PATH', async () => {
    const { stdout, result } = await client.exec({ argv: ['printf', '%s|', 'a b', '$HOME', ''] }).collect();
    assert.equal(stdout.toString(), 'a b|$HOME||');
    assert.equal(result.exitCode, 0);
  });

  it('applies env and cwd', async () => {
    const { stdout } = await client.exec({ argv: ['sh', '-c', 'echo "$GREETING $(pwd)"'], env: { GREETING: 'hi' }, cwd: '/tmp' }).collect();
    assert.equal(stdout.toString(), 'hi /tmp\n');
  });

  it('says clearly when the command does not exist or the cwd is missing', async () => {
    await assert.rejects(client.exec({ argv: ['no-such-program-xyz'] }).result, (error: unknown) => {
      assert.ok(error instanceof AgentOperationError);
      assert.equal(error.code, 'COMMAND_NOT_FOUND');
      return true;
    });
    await assert.rejects(client.exec({ argv: ['true'], cwd: '/no/such/dir' }).result, { code: 'INVALID_CWD' });
  });

  it('reports a terminating signal', async () => {
    const { result } = await client.exec({ command: 'kill -TERM $$', shell: ['/bin/sh', '-c'] }).collect();
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGTERM');
  });

  it('kills the whole process group at the deadline and says timedOut', async () => {
    const marker = `${agent.dir}/survivor`;
    const started = Date.now();
    const { result } = await client.exec({ command: `(sleep 2; touch ${marker}) & sleep 30`, shell: ['/bin/sh', '-c'], timeoutMs: 300 }).collect();
    assert.equal(result.timedOut, true);
    assert.equal(result.signal, 'SIGKILL');
    assert.ok(Date.now() - started < 5000);
    // The background job was in the same group: it must not have survived to touch the file.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const check = await client.exec({ argv: ['test', '-e', marker] }).collect();
    assert.equal(check.result.exitCode, 1, 'the background job outlived the deadline');
  });

  it('streams stdin and output both ways while the process runs', async () => {
    const handle = client.exec({ argv: ['cat'], stdin: true });
    const events = handle.output[Symbol.asyncIterator]();
    await handle.writeStdin('first\n');
    const first = await events.next();
    assert.deepEqual(first.value, { type: 'stdout', data: Buffer.from('first\n') }, 'output must arrive before stdin ends');
    await handle.writeStdin(Buffer.from([0, 255, 10]));
    const second = await events.next();
    assert.deepEqual(second.value?.data, Buffer.from([0, 255, 10]));
    handle.endStdin();
    const result = await handle.result;
    assert.equal(result.exitCode, 0);
  });

  it('moves bulk data both ways at once (large stdin through cat)', { timeout: 30_000 }, async () => {
    const size = 20 * 1024 * 1024;
    const handle = client.exec({ argv: ['cat'], stdin: true });
    const collected = handle.collect();
    const chunk = Buffer.alloc(256 * 1024, 0x5a);
    for (let sent = 0; sent < size; sent += chunk.length) await handle.writeStdin(chunk);
    handle.endStdin();
    const { stdout, result } = await collected;
    assert.equal(result.exitCode, 0);
    assert.equal(stdout.length, size);
  });

  it('delivers a signal sent by the host', async () => {
    const handle = client.exec({ argv: ['sleep', '30'] });
    await handle.pid;
    handle.kill('SIGINT');
    const result = await handle.result;
    assert.equal(result.signal, 'SIGINT');
  });

  it('kills the process when the host cancels', async () => {
    const handle = client.exec({ command: `echo $$ > ${agent.dir}/cancelled.pid; exec sleep 30`, shell: ['/bin/sh', '-c'] });
    const pid = await handle.pid;
    await new Promise((resolve) => setTimeout(resolve, 200));
    handle.cancel();
    await assert.rejects(handle.result, { code: 'AGENT_ABORTED' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
  });

  it('carries large binary output byte-exact', async () => {
    const file = `${agent.dir}/random.bin`;
    const { stdout, stderr, result } = await client
      .exec({ command: `head -c 20000000 /dev/urandom > ${file}; cat ${file}; sha256sum < ${file} >&2`, shell: ['/bin/sh', '-c'] })
      .collect();
    assert.equal(result.exitCode, 0);
    assert.equal(stdout.length, 20_000_000);
    assert.equal(createHash('sha256').update(stdout).digest('hex'), stderr.toString().split(' ')[0]);
  });

  it('runs many executions at once over one session', async () => {
    const count = 40;
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: count }, (_, index) => client.exec({ argv: ['sh', '-c', `sleep 0.2; echo ${index}`] }).collect()));
    const elapsedMs = performance.now() - started;
    results.forEach(({ stdout, result }, index) => {
      assert.equal(result.exitCode, 0);
      assert.equal(stdout.toString(), `${index}\n`);
    });
    // Sequentially this would take count × 200 ms.
    assert.ok(elapsedMs < count * 200, `took ${elapsedMs} ms`);
  });

  it('reports CPU time of the process and its children (cgroup v2)', async (t) => {
    if (!agent.cgroupRoot) {
      t.skip('no cgroup v2 on this host');
      return;
    }
    const { result } = await client.exec({ command: 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done', shell: ['/bin/sh', '-c'] }).collect();
    assert.ok(result.cpu, 'cpu time missing');
    assert.ok(result.cpu.totalMs > 10, `cpu ${JSON.stringify(result.cpu)}`);
    assert.ok(result.cpu.totalMs <= result.durationMs * 1.5 + 20, `cpu ${result.cpu.totalMs} ms > wall ${result.durationMs} ms`);
    const idle = await client.exec({ argv: ['sleep', '0.3'] }).collect();
    assert.ok(idle.result.cpu && idle.result.cpu.totalMs < 100, `sleep used ${idle.result.cpu?.totalMs} ms of CPU`);
  });

  it('returns when the command exits even if a background job keeps its stdout open', async () => {
    const started = Date.now();
    const { stdout, result } = await client.exec({ command: 'sleep 5 & echo started', shell: ['/bin/sh', '-c'] }).collect();
    assert.equal(stdout.toString(), 'started\n');
    assert.equal(result.exitCode, 0);
    assert.ok(Date.now() - started < 3000);
  });

  it('rejects malformed requests', async () => {
    await assert.rejects(client.exec({ argv: [] }).result, { code: 'BAD_REQUEST' });
    await assert.rejects(client.exec({ argv: ['echo'], command: 'echo' }).result, { code: 'BAD_REQUEST' });
    await assert.rejects(client.exec({ argv: ['echo', 'a\0b'] }).result, { code: 'BAD_REQUEST' });
  });
});
