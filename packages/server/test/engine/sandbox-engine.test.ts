/**
 * The engine on real VMs: clones of one snapshot never share randomness or identity, big files round-trip
 * byte-exact, VMs die at their deadline, and VMs of a crashed server are re-adopted (or reaped once
 * expired) by the next one, leaving no QEMU, socket or overlay behind.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { SandboxEngine } from '../../src/engine/sandbox-engine.ts';
import { waitUntil } from '../helpers/wait.ts';
import { engineConfig, newDataDir, qemuProcessesMatching, sh, startEngine } from './engine-fixture.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

describe('sandbox engine on real VMs', () => {
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

  test('two clones of one snapshot differ in randomness, hostname and VM id', async () => {
    await Promise.all(['vm-clonea', 'vm-cloneb'].map((vmId) => engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 120 })));
    const probe =
      'cat /proc/sys/kernel/random/uuid; head -c 32 /dev/urandom | sha256sum | cut -c1-16; hostname; ' +
      'python3 -c "import random, secrets; print(random.random(), secrets.token_hex(8))"';
    const [a, b] = await Promise.all([sh(engine, 'vm-clonea', probe), sh(engine, 'vm-cloneb', probe)]);
    const [la, lb] = [a.trim().split('\n'), b.trim().split('\n')];
    assert.equal(la.length, 4);
    for (let i = 0; i < 4; i++) assert.notEqual(la[i], lb[i], `line ${i} differs: ${la[i]}`);
    assert.equal(la[2], 'vm-clonea');
    assert.equal(lb[2], 'vm-cloneb');
    const pyA = await engine.agent('vm-clonea')!.runPython({ contextId: 'r', code: 'import random; random.random()' });
    const pyB = await engine.agent('vm-cloneb')!.runPython({ contextId: 'r', code: 'import random; random.random()' });
    assert.notEqual(pyA.result, pyB.result, 'the pre-started interpreter was reseeded in each clone');
    // The interpreter that was the spare runs user code at normal priority; its replacement starts at nice 19.
    assert.equal((await engine.agent('vm-clonea')!.runPython({ contextId: 'r', code: 'import os; os.nice(0)' })).result, '0');
    const nices = await sh(engine, 'vm-clonea', 'ps -o ni=,args= -C python3');
    assert.match(nices, /^\s*19 python3 -u -c/m, nices);
    await Promise.all([engine.kill('vm-clonea'), engine.kill('vm-cloneb')]);
    assert.deepEqual(engine.liveVmIds(), []);
  });

  test('a 100 MiB file round-trips byte-exact; the guest sees the memory it asked for', async () => {
    await engine.acquire({ vmId: 'vm-bigfile', vcpuCount: 1, memoryMb: 768, lifetimeSeconds: 300 });
    const agent = engine.agent('vm-bigfile')!;
    const data = randomBytes(100 * 1024 * 1024);
    const sha = createHash('sha256').update(data).digest('hex');
    const written = await agent.writeFile('/root/big.bin', Readable.from([data.subarray(0, 50 * 1048576), data.subarray(50 * 1048576)]));
    assert.equal(written.size, data.length);
    assert.equal((await sh(engine, 'vm-bigfile', 'sha256sum /root/big.bin')).split(' ')[0], sha);
    const read = await agent.readFile('/root/big.bin');
    const hash = createHash('sha256');
    for await (const chunk of read.stream) hash.update(chunk as Buffer);
    assert.equal(hash.digest('hex'), sha);
    // Those bytes took the transfer share, which the guest can write to: it is capped, not the host's disk.
    const fill = await sh(
      engine,
      'vm-bigfile',
      'mount | grep -c "sandboxd.transfer on /run/sandboxd-transfer type 9p"; dd if=/dev/zero of=/run/sandboxd-transfer/fill bs=1M count=200 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"; rm -f /run/sandboxd-transfer/fill',
    );
    assert.match(fill, /^1\n/, fill);
    assert.match(fill, /No space left on device|exit 1/, fill);
    const filled = Number(/(\d+) bytes/.exec(fill)?.[1] ?? 0);
    assert.ok(filled <= 34 * 1024 * 1024, `the guest wrote ${filled} bytes into its transfer area`);
    const memTotalKb = Number(/MemTotal:\s+(\d+)/.exec(await sh(engine, 'vm-bigfile', 'cat /proc/meminfo'))![1]);
    // The kernel keeps ~55 MiB of what it is given; the rest is the guest's, and not a page more.
    assert.ok(memTotalKb > 680 * 1024 && memTotalKb <= 768 * 1024, `MemTotal ${memTotalKb} kB for 768 MiB`);
    await engine.kill('vm-bigfile');
  });

  test('exec: exit codes and stderr come back; past its deadline a command is killed with all it started', async () => {
    await engine.acquire({ vmId: 'vm-exec', vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 300 });
    const agent = engine.agent('vm-exec')!;
    const stderr: Buffer[] = [];
    const failed = await agent.exec({ command: 'echo oops >&2; exit 7', shell: ['/bin/bash', '-c'] }, { onStdout: () => {}, onStderr: (c) => stderr.push(c) });
    assert.equal(failed.exitCode, 7);
    assert.equal(Buffer.concat(stderr).toString(), 'oops\n');
    // setsid puts the background sleep outside the command's process group: only its cgroup still holds it.
    const started = Date.now();
    const slow = await agent.exec(
      { command: 'setsid sleep 300 & sleep 300', shell: ['/bin/bash', '-c'], timeoutMs: 1500 },
      { onStdout: () => {}, onStderr: () => {} },
    );
    assert.equal(slow.timedOut, true);
    assert.ok(Date.now() - started < 15_000, `killed after ${Date.now() - started} ms`);
    // Both sleeps are gone, and the agent, which was in that cgroup for the moment of the fork, is not.
    assert.equal((await sh(engine, 'vm-exec', 'pgrep -c -x sleep || true')).trim(), '0');
    await engine.kill('vm-exec');
  });

  test('memory limits hold: a guest program cannot use more than the VM asked for, and the VM lives on', async (t) => {
    // 512 MiB is the default size (a snapshot of exactly that much); 768 MiB comes from the 1 GiB balloon tier,
    // where the balloon is what keeps the other 256 MiB from the guest.
    for (const memoryMb of [512, 768]) {
      const vmId = `vm-memhog${memoryMb}`;
      await engine.acquire({ vmId, vcpuCount: 1, memoryMb, lifetimeSeconds: 300 });
      // Touches 16 MiB at a time until the guest stops it (MemoryError or the guest's OOM killer), printing how
      // far it got.
      const hog =
        'held = []\ntry:\n    while True:\n        held.append(bytearray(b"x" * (16 << 20)))\n        print(len(held) * 16, flush=True)\nexcept MemoryError:\n    print("MemoryError", flush=True)\n';
      const out = await sh(engine, vmId, `python3 -c '${hog}' > /tmp/hog.out 2>&1; echo "exit=$?"; tail -n 2 /tmp/hog.out`);
      const reachedMb = Math.max(0, ...[...out.matchAll(/^(\d+)$/gm)].map((m) => Number(m[1])));
      t.diagnostic(`${memoryMb} MiB VM: the hog held ${reachedMb} MiB, then ${/MemoryError/.test(out) ? 'MemoryError' : 'the OOM killer'}`);
      assert.ok(/MemoryError|exit=137/.test(out), `the hog was stopped: ${out}`);
      assert.ok(reachedMb >= 128 && reachedMb < memoryMb, `the hog held ${reachedMb} MiB in a ${memoryMb} MiB VM`);
      // The guest's OOM killer may end user programs, never the agent; what the agent runs is fair game. The
      // agent takes on a program's score and cgroup only for the moment of the fork: it is back home after.
      const agentPid = "$(pgrep -f '^/usr/bin/node /opt/sandboxd/agent.mjs')";
      const placement = await sh(engine, vmId, `cat /proc/${agentPid}/oom_score_adj /proc/self/oom_score_adj /proc/${agentPid}/cgroup /proc/self/cgroup`);
      const [agentScore, ownScore, agentCgroup, ownCgroup] = placement.trim().split('\n');
      assert.deepEqual([agentScore, ownScore, agentCgroup], ['-1000', '0', '0::/']);
      assert.match(ownCgroup ?? '', /^0::\/sandboxd-exec\/exec-\d+$/);
      assert.equal((await sh(engine, vmId, 'echo alive')).trim(), 'alive');
      await engine.kill(vmId);
    }
  });

  test('a VM dies at its deadline and leaves no QEMU behind', async () => {
    const ended = new Promise<string>((resolve) => engine.onVmEnded((vmId, reason) => vmId === 'vm-deadline' && resolve(reason)));
    const started = Date.now();
    await engine.acquire({ vmId: 'vm-deadline', vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 4 });
    assert.equal(await ended, 'expired');
    assert.ok(Date.now() - started >= 4000);
    assert.equal(engine.agent('vm-deadline'), null);
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(engine.liveVmIds(), []);
  });
});

describe('warm pool on real VMs', () => {
  const dataDir = newDataDir();
  let engine: SandboxEngine;

  before(async () => {
    engine = startEngine(engineConfig(dataDir, { poolSize: 1 }));
    await engine.start();
  });
  after(async () => {
    await engine.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function acquirePooled(vmId: string): Promise<void> {
    await waitUntil('a pooled VM', async () => (engine.poolCounts()['1:512'] ?? 0) >= 1, 60_000, 100);
    const fromPool = new Promise<boolean>((resolve) => engine.events.once('acquired', (event) => resolve(event.fromPool)));
    const identified = new Promise<string>((resolve) => engine.events.once('identified', (event) => resolve(event.vmId)));
    await engine.acquire({ vmId, vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 120 });
    assert.equal(await fromPool, true);
    // The first operation waits for the identity the engine applies in the background.
    assert.equal((await sh(engine, vmId, 'hostname')).trim(), vmId);
    assert.equal(await identified, vmId);
  }

  test('a VM from the warm pool: its first operation already sees its own identity, and two pooled VMs differ', async () => {
    await acquirePooled('vm-poola');
    await acquirePooled('vm-poolb');
    const probe = 'cat /proc/sys/kernel/random/uuid; head -c 32 /dev/urandom | sha256sum | cut -c1-16';
    const [a, b] = await Promise.all([sh(engine, 'vm-poola', probe), sh(engine, 'vm-poolb', probe)]);
    const [la, lb] = [a.trim().split('\n'), b.trim().split('\n')];
    for (let i = 0; i < 2; i++) assert.notEqual(la[i], lb[i], `line ${i} differs: ${la[i]}`);
    await Promise.all([engine.kill('vm-poola'), engine.kill('vm-poolb')]);
  });
});

describe('after a server crash', () => {
  const dataDir = newDataDir();
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** Acquires a VM in a child process and SIGKILLs it; answers when the VM was handed out (its lifetime runs from then). */
  async function crashWithVm(vmId: string, lifetimeSeconds: number): Promise<number> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'fixtures', 'hold-vm.ts'), dataDir, vmId, String(lifetimeSeconds)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => String(d).includes('acquired') && resolve());
      child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
    });
    const acquiredAt = Date.now();
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    return acquiredAt;
  }

  test('the next server re-adopts a live VM, and reaps one whose lifetime ended meanwhile', async () => {
    const config = engineConfig(dataDir);
    await crashWithVm('vm-survivor', 600);
    // Long enough to outlive its holder's kill however busy the machine is; then waited out (no more).
    const expiringLifetimeMs = 10_000;
    const expiringAcquiredAt = await crashWithVm('vm-expiring', expiringLifetimeMs / 1000);
    const runDirs = fs.readdirSync(config.vm.runDir);
    assert.equal(runDirs.length, 2, 'both VMs left run directories');
    assert.equal(runDirs.flatMap((d) => qemuProcessesMatching(d)).length, 2, 'and their QEMUs run on');
    await new Promise((r) => setTimeout(r, Math.max(0, expiringAcquiredAt + expiringLifetimeMs + 1000 - Date.now())));

    const engine = startEngine(config);
    try {
      await engine.start();
      assert.deepEqual(engine.liveVmIds(), ['vm-survivor']);
      assert.equal((await sh(engine, 'vm-survivor', 'hostname')).trim(), 'vm-survivor', 'the adopted VM answers');
      assert.equal(fs.readdirSync(config.vm.runDir).length, 1, "the expired VM's run directory is gone");
    } finally {
      await engine.close();
    }
    assert.equal(fs.existsSync(config.vm.runDir), false, 'closing kills and cleans up the adopted VM, then removes the empty run root');
    assert.deepEqual(
      runDirs.flatMap((d) => qemuProcessesMatching(d)),
      [],
      'no QEMU of either VM is left',
    );
  });
});
