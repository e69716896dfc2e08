/**
 * A VM used the way an attacker (or a careless program) would, on real VMs through the engine's guest agent: the
 * agent keeps answering, and every failure is a clear error of the API's, never a hang.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { AppError } from '../../src/core/errors.ts';
import type { SandboxEngine } from '../../src/engine/sandbox-engine.ts';
import { waitUntil } from '../helpers/wait.ts';
import { engineConfig, newDataDir, sh, startEngine } from './engine-fixture.ts';

/** Rejects when `promise` has not settled within `ms`: what a hang looks like to a test. */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A terminal starts, shows its program's output, and is killed. */
async function checkTerminal(engine: SandboxEngine, vmId: string): Promise<string> {
  const agent = engine.agent(vmId)!;
  const info = await agent.createPty({ argv: ['/bin/sh', '-c', 'echo terminal-ok; sleep 30'], cols: 80, rows: 24 });
  let output = '';
  const seen = new Promise<void>((resolve) => {
    void agent.attachPty(info.id, {
      onOutput: (chunk) => {
        output += chunk.toString();
        if (output.includes('terminal-ok')) resolve();
      },
      onExit: () => resolve(),
    });
  });
  await within(60_000, 'terminal output', seen);
  assert.match(output, /terminal-ok/);
  await agent.killPty(info.id);
  return info.id;
}

describe('a VM under hostile use', () => {
  const dataDir = newDataDir();
  let engine: SandboxEngine;

  before(async () => {
    engine = startEngine(engineConfig(dataDir));
    await engine.start();
  });
  after(async () => {
    await engine.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('downloading named pipes answers a clear 4xx for each at once, and exec, files and terminals keep working', async () => {
    const vmId = 'vm-fifo';
    await engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 300 });
    const agent = engine.agent(vmId)!;
    await sh(engine, vmId, 'for i in 1 2 3 4 5; do mkfifo /tmp/fifo$i; done; echo plain > /tmp/plain.txt');
    // Five at once: more than libuv's default pool of four threads, which blocking opens used to fill.
    const reads = await within(60_000, 'five FIFO downloads', Promise.allSettled([1, 2, 3, 4, 5].map((i) => agent.readFile(`/tmp/fifo${i}`))));
    for (const [index, outcome] of reads.entries()) {
      assert.equal(outcome.status, 'rejected', `fifo${index + 1} was not refused`);
      const error = (outcome as PromiseRejectedResult).reason as AppError;
      assert.ok(error instanceof AppError, String(error));
      const status = error.statusCode;
      assert.ok(status >= 400 && status < 500, `${error.code} (${status}): ${error.message}`);
      assert.match(error.message, new RegExp(`/tmp/fifo${index + 1} is a named pipe \\(FIFO\\)`));
    }
    assert.equal((await within(60_000, 'exec', sh(engine, vmId, 'echo alive'))).trim(), 'alive');
    const file = await within(60_000, 'file read', agent.readFile('/tmp/plain.txt'));
    const chunks: Buffer[] = [];
    for await (const chunk of file.stream) chunks.push(chunk as Buffer);
    assert.equal(Buffer.concat(chunks).toString(), 'plain\n');
    await within(60_000, 'terminal', checkTerminal(engine, vmId));
    // Blocking calls of a hostile file system hold libuv pool threads: the agent has many, its programs the default.
    const agentPid = "$(pgrep -f '^/usr/bin/node /opt/sandboxd/agent.mjs')";
    const [threads, inherited] = (await sh(engine, vmId, `ls /proc/${agentPid}/task | wc -l; echo "\${UV_THREADPOOL_SIZE-unset}"`)).trim().split('\n');
    assert.ok(Number(threads) > 64, `the agent runs ${threads} threads`);
    assert.equal(inherited, 'unset');
    await engine.kill(vmId);
  });

  test('an upload to a directory without a trailing "/" is a 409 that names the directory, and leaves no temporary file', async () => {
    const vmId = 'vm-updir';
    await engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 300 });
    const agent = engine.agent(vmId)!;
    // A small file crosses the agent link, a large one the transfer share: both refuse the same way.
    for (const size of [100, 3 * 1024 * 1024]) {
      const upload = agent.writeFile('/root', Readable.from([randomBytes(size)]));
      await assert.rejects(upload, (error: AppError) => {
        assert.ok(error instanceof AppError, String(error));
        assert.equal(error.statusCode, 409, error.message);
        assert.equal(error.message, '/root is a directory: end the path with "/" to put the file inside it');
        return true;
      });
    }
    assert.equal((await sh(engine, vmId, 'ls -a / /root | grep -c sandboxd-upload || true')).trim(), '0');
    await engine.kill(vmId);
  });

  test('two clones of one snapshot differ in machine id, boot id and the terminal ids their agents draw', async () => {
    const vmIds = ['vm-clone-1', 'vm-clone-2'];
    await Promise.all(vmIds.map((vmId) => engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 300 })));
    const [a, b] = await Promise.all(
      vmIds.map(async (vmId) => {
        const probe = 'cat /proc/sys/kernel/random/boot_id; cat /etc/machine-id 2>/dev/null || echo missing';
        const [bootId, machineId] = (await sh(engine, vmId, probe)).trim().split('\n');
        return { bootId, machineId, terminalId: await checkTerminal(engine, vmId) };
      }),
    );
    const shared = (['bootId', 'machineId', 'terminalId'] as const).filter((field) => a![field] === b![field]);
    assert.deepEqual(shared, [], `the clones share ${shared.join(', ')}: ${JSON.stringify([a, b])}`);
    assert.match(a!.machineId ?? '', /^[0-9a-f]{32}$/);
    assert.match(a!.bootId ?? '', /^[0-9a-f-]{36}$/);
    await Promise.all(vmIds.map((vmId) => engine.kill(vmId)));
  });

  test('a Python interpreter killed for memory says so and that its state is lost; the next run starts afresh', async () => {
    const vmId = 'vm-pyoom';
    await engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 300 });
    const agent = engine.agent(vmId)!;
    assert.equal((await agent.runPython({ contextId: 'oom', code: 'kept = 41\nkept + 1' })).result, '42');
    // Touches 16 MiB at a time: each allocation succeeds, the pages do not, and the guest's OOM killer steps in.
    const hog = await within(
      240_000,
      'the memory hog',
      agent.runPython({ contextId: 'oom', code: 'hog = []\nwhile True:\n    hog.append(b"x" * (16 << 20))', timeoutMs: 180_000 }),
    );
    assert.equal(hog.kernelRestarted, true);
    assert.equal(hog.error?.name, 'KernelDied');
    assert.match(
      hog.error?.value ?? '',
      /killed by the out-of-memory killer: the code used more memory than the VM has \(\d+ MiB\); its state \(variables, imports\) is lost/,
    );
    // What the host's execution record shows on stderr.
    assert.equal(hog.error?.traceback, `KernelDied: ${hog.error?.value}\n`);
    const after = await agent.runPython({ contextId: 'oom', code: 'kept' });
    assert.equal(after.error?.name, 'NameError', 'a new interpreter, without the old state');
    assert.equal((await agent.runPython({ contextId: 'oom', code: '1 + 1' })).result, '2');
    await engine.kill(vmId);
  });

  test('a fork bomb ends with its result, stays within the process limit, and exec and terminals keep answering', async () => {
    const vmId = 'vm-forkbomb';
    await engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 300 });
    const agent = engine.agent(vmId)!;
    // As reported: bash returns at once, the bomb's processes live on, holding the execution's output pipes.
    const bomb = await within(
      180_000,
      'the fork bomb',
      agent.exec({ command: "timeout 20 bash -c ':(){ :|:& };:'", shell: ['/bin/bash', '-c'], timeoutMs: 60_000 }, { onStdout: () => {}, onStderr: () => {} }),
    );
    assert.equal(typeof bomb.exitCode, 'number');
    // While what it left runs, the VM's task count (processes and threads) stays bounded, and execs are answered.
    let most = 0;
    for (let sample = 0; sample < 8; sample++) {
      const tasks = Number((await within(60_000, 'an exec during the bomb', sh(engine, vmId, 'read a b c d e </proc/loadavg; echo "${d#*/}"'))).trim());
      most = Math.max(most, tasks);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.ok(most <= 1024 + 300, `the VM ran ${most} tasks`);
    // A bomb that ran into its group's process limit has its leftovers killed.
    await waitUntil(
      'the bomb killed',
      async () => Number((await sh(engine, vmId, 'cat /sys/fs/cgroup/sandboxd-exec/pids.current')).trim()) < 50,
      120_000,
      1000,
    );
    assert.equal((await within(60_000, 'exec after the bomb', sh(engine, vmId, 'echo alive'))).trim(), 'alive');
    await within(60_000, 'terminal after the bomb', checkTerminal(engine, vmId));
    await engine.kill(vmId);
  });
});
