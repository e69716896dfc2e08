/**
 * The QEMU driver with real VMs of the real guest image and agent: one cold boot that becomes a snapshot,
 * restores from it (two at once), the memory each guest sees, the network guard seen from a guest, limits,
 * kill, a QEMU killed from outside, and recovery after the server process itself was killed.
 * Under TCG the whole file takes one to three minutes.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { availableParallelism, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AgentClient } from '../../src/agent/index.ts';
import type { GuestImage } from '../../src/image/index.ts';
import { GUARD_TABLE } from '../../src/vm/qemu/network-guard.ts';
import { runProgram } from '../../src/host/run-program.ts';
import type { VmStateFile } from '../../src/vm/qemu/run-dir.ts';
import type { HostReport, SnapshotInfo, VmInfo } from '../../src/vm/vm-driver.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createDriver, guestShell, processAlive, scratchDir, testImage, type RecordingDriver } from './vm-fixture.ts';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CRASHING_SERVER = fileURLToPath(new URL('./fixtures/crashing-server.ts', import.meta.url));
const BOOT_MEMORY_MB = 512;
const MIN_MEMORY_MB = 256;

async function readState(vm: VmInfo): Promise<VmStateFile> {
  return JSON.parse(await readFile(join(vm.runDir, 'vm.json'), 'utf8')) as VmStateFile;
}

async function memTotalKb(vm: VmInfo): Promise<number> {
  const { output } = await guestShell(vm.agentSocketPath, 'grep MemTotal /proc/meminfo');
  return Number(/MemTotal:\s+(\d+)/.exec(output)?.[1]);
}

/** Everything a dead VM could have left: its process, run directory (sockets, overlay, logs) and cgroups. */
/** Mount points at or below `dir`, from the host's mount table. */
async function mountsUnder(dir: string): Promise<string[]> {
  const mounts = await readFile('/proc/self/mounts', 'utf8');
  return mounts
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}

async function assertNothingLeft(pid: number, state: VmStateFile, runDir: string): Promise<void> {
  assert.equal(await processAlive(pid), false, `QEMU ${pid} still runs`);
  assert.equal(existsSync(runDir), false, `${runDir} still exists`);
  assert.deepEqual(await mountsUnder(runDir), [], 'the transfer area is unmounted');
  for (const path of state.cgroupPaths) assert.equal(existsSync(path), false, `cgroup ${path} still exists`);
}

function listen(host: string): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.end('HTTP/1.0 200 OK\r\n\r\nhost service\n'));
    server.listen(0, host, () => resolve(server));
  });
}

describe('QEMU driver with real VMs', { timeout: 20 * 60_000 }, () => {
  let image: GuestImage;
  let rec: RecordingDriver;
  let host: HostReport;
  let root: string;
  let snapshot: SnapshotInfo;
  let clones: VmInfo[] = [];
  /** The size (512-byte sectors) the first clone's disk was grown to; a capture of it keeps that. */
  let grownSectors = 0;

  before(async () => {
    image = await testImage();
    rec = createDriver();
    host = await rec.driver.prepare(image);
    root = await scratchDir('sbx-vm-');
  });

  after(async () => {
    await rec?.driver.killAll();
    if (root) await rm(root, { recursive: true, force: true });
  });

  test('prepare reports the accelerator and which protections are active', (t) => {
    t.diagnostic(`accelerator ${host.accelerator}${host.acceleratorFallbackReason ? ` (${host.acceleratorFallbackReason})` : ''}`);
    t.diagnostic(`limits: ${host.resourceLimits.detail}; guard: ${host.networkGuard.detail}; sandbox: ${host.processSandbox.detail}`);
    assert.ok(host.accelerator === 'kvm' || host.acceleratorFallbackReason, 'a TCG fallback says why');
    if (process.getuid?.() === 0) {
      assert.equal(host.processSandbox.active, true, host.processSandbox.detail);
      assert.equal(host.networkGuard.active, true, host.networkGuard.detail);
    }
  });

  test('a cold boot reaches the agent through the console stages, in its own cgroup', async (t) => {
    const started = Date.now();
    const source = await rec.driver.boot({
      vmId: 'source',
      runDir: join(root, 'run', 'source'),
      image,
      vcpuCount: 1,
      memoryMb: BOOT_MEMORY_MB,
      network: 'none',
      snapshotDir: join(root, 'snapshot'),
    });
    t.diagnostic(
      `cold boot to agent: ${Date.now() - started} ms; stages ${JSON.stringify(rec.stages.filter((s) => s.vmId === 'source').map((s) => [s.stage, s.elapsedMs]))}`,
    );
    assert.deepEqual(
      rec.stages.filter((s) => s.vmId === 'source').map((s) => s.stage),
      ['spawn', 'initramfs', 'init', 'agent'],
    );
    assert.equal(source.snapshotCapable, true);
    assert.equal(await processAlive(source.pid), true);
    if (host.processSandbox.active) {
      // Seccomp mode 2 (filter) and the unprivileged user, as the kernel sees the QEMU process.
      const status = await readFile(`/proc/${source.pid}/status`, 'utf8');
      assert.match(status, /^Seccomp:\s+2$/m);
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      assert.notEqual(uid, 0, 'QEMU does not run as root');
    }
    const client = await AgentClient.connect({ socketPath: source.agentSocketPath }, { timeoutMs: 30_000 });
    try {
      assert.equal((await client.hello()).vmId, 'source');
    } finally {
      await client.close();
    }
    if (host.resourceLimits.active) {
      const state = await readState(source);
      const cgroupOf = await readFile(`/proc/${source.pid}/cgroup`, 'utf8');
      assert.ok(state.cgroupPaths.length > 0);
      for (const path of state.cgroupPaths) {
        assert.ok(cgroupOf.includes(`/source\n`), `QEMU is in its cgroup:\n${cgroupOf}`);
        // One vCPU, capped at one CPU unless the host keeps more than its reserve of 0.5 CPUs back from it.
        const quotaUs = String(Math.min(1, availableParallelism() - 0.5) * 100_000);
        if (existsSync(join(path, 'cpu.cfs_quota_us'))) assert.equal((await readFile(join(path, 'cpu.cfs_quota_us'), 'utf8')).trim(), quotaUs);
        if (existsSync(join(path, 'cpu.max'))) assert.equal((await readFile(join(path, 'cpu.max'), 'utf8')).trim(), `${quotaUs} 100000`);
        for (const file of ['memory.limit_in_bytes', 'memory.max']) {
          if (!existsSync(join(path, file))) continue;
          const limitMb = Number(await readFile(join(path, file), 'utf8')) / 2 ** 20;
          assert.ok(limitMb > BOOT_MEMORY_MB && limitMb <= BOOT_MEMORY_MB + 512, `memory limit ${limitMb} MiB`);
        }
      }
    }
  });

  test('a snapshot freezes RAM, device state and disk; the source VM is gone', async (t) => {
    const source = rec.driver.get('source')!;
    const client = await AgentClient.connect({ socketPath: source.agentSocketPath }, { timeoutMs: 30_000 });
    await client.prepareSnapshot({ timeoutMs: 60_000 });
    const started = Date.now();
    snapshot = await rec.driver.saveSnapshot({ vmId: 'source', minMemoryMb: MIN_MEMORY_MB });
    t.diagnostic(
      `save (with shrinking the guest ${BOOT_MEMORY_MB} -> ${MIN_MEMORY_MB} MiB): ${Date.now() - started} ms, device state ${snapshot.stateBytes} bytes`,
    );
    assert.deepEqual([snapshot.bootMemoryMb, snapshot.minMemoryMb, snapshot.vcpuCount], [BOOT_MEMORY_MB, MIN_MEMORY_MB, 1]);
    for (const file of ['memory', 'state', 'disk.qcow2', 'snapshot.json']) {
      const { mode } = await stat(join(snapshot.dir, file));
      assert.equal(mode & 0o222, 0, `${file} is read-only`);
    }
    assert.equal(await processAlive(source.pid), false);
    assert.equal(existsSync(source.runDir), false);
    assert.equal(rec.driver.get('source'), undefined);
    assert.deepEqual(await rec.driver.readSnapshot(snapshot.dir), snapshot);
    assert.equal(
      rec.exits.some((exit) => exit.vmId === 'source'),
      false,
      'a VM consumed by a snapshot is not reported as exited',
    );
  });

  test('two restores at the same time both answer, each its own VM with its own disk', async (t) => {
    const started = Date.now();
    const timed = async (vmId: string, memoryMb: number) => {
      const begin = Date.now();
      const vm = await rec.driver.restore({ vmId, runDir: join(root, 'run', vmId), snapshotDir: snapshot.dir, memoryMb, network: 'user' });
      return { vm, ms: Date.now() - begin };
    };
    const results = await Promise.all([timed('clone-a', MIN_MEMORY_MB), timed('clone-b', BOOT_MEMORY_MB)]);
    clones = results.map((r) => r.vm);
    t.diagnostic(`parallel restores -> agent answered: ${results.map((r) => `${r.vm.vmId} ${r.ms} ms`).join(', ')}; both in ${Date.now() - started} ms`);
    t.diagnostic(`restore stages: ${JSON.stringify(rec.stages.filter((s) => s.vmId.startsWith('clone')).map((s) => [s.vmId, s.stage, s.elapsedMs]))}`);
    const [a, b] = clones as [VmInfo, VmInfo];
    assert.notEqual(a.pid, b.pid);
    // Each has its own transfer area: a tmpfs mounted in its run directory.
    for (const vm of clones) assert.deepEqual([vm.transferDir, await mountsUnder(vm.runDir)], [join(vm.runDir, 'transfer'), [join(vm.runDir, 'transfer')]]);
    const write = await guestShell(a.agentSocketPath, 'echo only-in-a > /root/marker && sync && cat /root/marker');
    assert.equal(write.output.trim(), 'only-in-a');
    const read = await guestShell(b.agentSocketPath, 'cat /root/marker 2>&1 || echo absent');
    assert.match(read.output, /absent|No such file/);
    for (const vm of clones) {
      const client = await AgentClient.connect({ socketPath: vm.agentSocketPath }, { timeoutMs: 30_000 });
      try {
        await client.restore({ hostname: vm.vmId, vmId: vm.vmId });
        assert.equal((await client.hello()).vmId, vm.vmId);
      } finally {
        await client.close();
      }
    }
  });

  test('each restored guest sees the memory it asked for', async (t) => {
    for (const vm of clones) {
      const kb = await memTotalKb(vm);
      // A cold boot's kernel keeps 47-60 MiB of 256-512 MiB for itself; the balloon makes restores match.
      const reservedMb = vm.memoryMb - kb / 1024;
      t.diagnostic(`${vm.vmId}: asked ${vm.memoryMb} MiB, guest MemTotal ${kb} kB (kernel keeps ${reservedMb.toFixed(1)} MiB)`);
      assert.ok(reservedMb > 40 && reservedMb < 70, `MemTotal ${kb} kB for ${vm.memoryMb} MiB`);
    }
  });

  test("growDisk enlarges a running guest's root disk at once and never shrinks it", async () => {
    const a = clones[0]!;
    const sectors = async () => Number((await guestShell(a.agentSocketPath, 'cat /sys/block/vda/size')).output.trim());
    // One GiB more than the image's own disk (2 GiB for the default image).
    const before = await sectors();
    const grownMb = (before * 512) / 2 ** 20 + 1024;
    const grown = (grownMb * 2 ** 20) / 512;
    await rec.driver.growDisk(a.vmId, grownMb);
    // virtio-blk interrupts the guest, whose kernel updates the size in a work item.
    await waitUntil(`the guest to see a ${grownMb} MiB disk`, async () => (await sectors()) === grown, 30_000, 100);
    grownSectors = grown;
    await rec.driver.growDisk(a.vmId, grownMb - 1024);
    assert.equal(await sectors(), grown, 'a smaller size is ignored');
    await assert.rejects(rec.driver.growDisk('no-such-vm', 4096), { code: 'VM_NOT_FOUND' });
  });

  test('a running VM is captured and runs on; a clone of the capture has its memory, processes and disk', async (t) => {
    const a = clones[0]!;
    await guestShell(a.agentSocketPath, 'echo before-capture > /root/captured && (setsid sleep 1001 >/dev/null 2>&1 &)');
    const bootIdOfA = (await guestShell(a.agentSocketPath, 'cat /proc/sys/kernel/random/boot_id')).output.trim();
    const client = await AgentClient.connect({ socketPath: a.agentSocketPath }, { timeoutMs: 30_000 });
    let capture;
    try {
      // Quiesced first, as the driver's contract asks: a mounted 9p share would refuse the migration.
      await client.quiesce();
      capture = await rec.driver.captureSnapshot({ vmId: a.vmId, snapshotDir: join(root, 'capture-1'), then: 'run' });
      await client.thaw();
    } finally {
      await client.close();
    }
    t.diagnostic(
      `capture (${host.accelerator === 'kvm' ? 'live' : 'guest stopped for the copy under TCG'}): guest stopped ${capture.pausedMs} ms, whole capture ${capture.durationMs} ms; memory file ${(capture.memoryBytes / 2 ** 20).toFixed(1)} MiB, disk layer ${(capture.diskBytes / 2 ** 20).toFixed(1)} MiB`,
    );
    assert.ok(capture.pausedMs > 0 && capture.pausedMs <= capture.durationMs + 1, `paused ${capture.pausedMs} of ${capture.durationMs} ms`);
    assert.deepEqual([capture.network, capture.vcpuCount, capture.minMemoryMb], ['user', 1, a.memoryMb]);
    const { dir, accelerator, network, vcpuCount, bootMemoryMb, minMemoryMb, savedAtMs, stateBytes } = capture;
    assert.deepEqual(await rec.driver.readSnapshot(capture.dir), { dir, accelerator, network, vcpuCount, bootMemoryMb, minMemoryMb, savedAtMs, stateBytes });
    // The source runs on, on a new layer, and diverges from the capture.
    assert.equal((await guestShell(a.agentSocketPath, 'cat /root/captured; echo after > /root/after-capture')).output.trim(), 'before-capture');
    await assert.rejects(rec.driver.captureSnapshot({ vmId: a.vmId, snapshotDir: capture.dir, then: 'run' }), { code: 'VM_INVALID_REQUEST' });
    await assert.rejects(rec.driver.captureSnapshot({ vmId: 'no-such-vm', snapshotDir: join(root, 'capture-x'), then: 'run' }), { code: 'VM_NOT_FOUND' });
    await assert.rejects(
      rec.driver.restore({
        vmId: 'wrong-net',
        runDir: join(root, 'run', 'wrong-net'),
        snapshotDir: capture.dir,
        memoryMb: capture.minMemoryMb,
        network: 'none',
      }),
      { code: 'VM_INVALID_REQUEST' },
    );

    const clone = await rec.driver.restore({
      vmId: 'capture-clone',
      runDir: join(root, 'run', 'capture-clone'),
      snapshotDir: capture.dir,
      memoryMb: capture.minMemoryMb,
      network: 'user',
    });
    clones.push(clone);
    const fixer = await AgentClient.connect({ socketPath: clone.agentSocketPath }, { timeoutMs: 30_000 });
    try {
      await fixer.restore({ hostname: 'capture-clone', vmId: 'capture-clone' });
    } finally {
      await fixer.close();
    }
    const seen = await guestShell(
      clone.agentSocketPath,
      'cat /root/captured; ls /root/after-capture 2>&1; pgrep -x sleep -a; cat /sys/block/vda/size; hostname; cat /proc/sys/kernel/random/boot_id',
    );
    const [captured, after, sleeper, sectors, name, bootId] = seen.output.trim().split('\n');
    assert.equal(captured, 'before-capture');
    assert.match(after!, /No such file/, 'what the source wrote after the capture is not in the clone');
    assert.match(sleeper!, /sleep 1001/, 'the process the source ran runs in the clone');
    assert.equal(Number(sectors), grownSectors, 'the clone has the disk the source had grown to');
    assert.equal(name, 'capture-clone');
    assert.match(bootId!, /^[0-9a-f-]{36}$/);
    assert.notEqual(bootId, bootIdOfA, 'the clone has a boot id of its own');
  });

  test('a pause captures a VM and ends it; a restore that takes the disk brings the same VM back, twice', async (t) => {
    const vmId = 'capture-clone';
    const before = rec.driver.get(vmId)!;
    await guestShell(before.agentSocketPath, 'echo paused-once > /root/pause-marker');
    const bootId = (await guestShell(before.agentSocketPath, 'cat /proc/sys/kernel/random/boot_id')).output.trim();
    let vm = before;
    for (const round of [1, 2]) {
      const client = await AgentClient.connect({ socketPath: vm.agentSocketPath }, { timeoutMs: 30_000 });
      await client.quiesce().finally(() => client.close());
      const pause = await rec.driver.captureSnapshot({ vmId, snapshotDir: join(root, `pause-${round}`), then: 'stop' });
      t.diagnostic(
        `pause ${round}: ${pause.durationMs} ms; memory ${(pause.memoryBytes / 2 ** 20).toFixed(1)} MiB, disk ${(pause.diskBytes / 2 ** 20).toFixed(1)} MiB`,
      );
      assert.equal(await processAlive(vm.pid), false, "the paused VM's QEMU is gone");
      assert.equal(rec.driver.get(vmId), undefined);
      assert.equal(existsSync(vm.runDir), false);
      const started = Date.now();
      vm = await rec.driver.restore({
        vmId,
        runDir: join(root, 'run', vmId),
        snapshotDir: pause.dir,
        memoryMb: pause.minMemoryMb,
        network: 'user',
        takeDisk: true,
      });
      t.diagnostic(`resume ${round}: ${Date.now() - started} ms`);
      // Used up: the directory may go at once (QEMU keeps the memory file mapped).
      await rm(pause.dir, { recursive: true, force: true });
      const resumed = await AgentClient.connect({ socketPath: vm.agentSocketPath }, { timeoutMs: 30_000 });
      try {
        await resumed.restore({ hostname: vmId, vmId, keepIdentity: true });
      } finally {
        await resumed.close();
      }
      const seen = await guestShell(
        vm.agentSocketPath,
        `cat /root/pause-marker; pgrep -x sleep -a; cat /proc/sys/kernel/random/boot_id; echo round-${round} >> /root/rounds; cat /root/rounds | wc -l`,
      );
      const [marker, sleeper, sameBootId, rounds] = seen.output.trim().split('\n');
      assert.equal(marker, 'paused-once');
      assert.match(sleeper!, /sleep 1001/);
      assert.equal(sameBootId, bootId, 'a resumed VM is the same machine: it keeps its boot id');
      assert.equal(Number(rounds), round, 'what it wrote before each pause is there, on its own disk');
    }
    assert.equal(
      rec.exits.some((exit) => exit.vmId === vmId),
      false,
      'a pause is not reported as an exit',
    );
    await rec.driver.kill(vmId);
  });

  test('a guest cannot reach the host: neither loopback (10.0.2.2) nor the host address; the internet it can', async (t) => {
    if (!host.networkGuard.active) return t.skip(host.networkGuard.detail);
    const a = clones[0]!;
    const loopback = await listen('127.0.0.1');
    const anyAddress = await listen('0.0.0.0');
    try {
      const loopbackPort = (loopback.address() as { port: number }).port;
      const anyPort = (anyAddress.address() as { port: number }).port;
      const hostIp = Object.values(networkInterfaces())
        .flat()
        .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
      // Control: the host itself reaches both listeners.
      assert.match((await runProgram('curl', ['-sS', '-m', '5', `http://127.0.0.1:${loopbackPort}/`])).stdout, /host service/);
      const viaSlirp = await guestShell(a.agentSocketPath, `curl -sS -m 10 http://10.0.2.2:${loopbackPort}/ 2>&1; echo "exit=$?"`);
      t.diagnostic(`guest -> 10.0.2.2:${loopbackPort}: ${viaSlirp.output.trim().replace(/\n/g, ' | ')}`);
      assert.doesNotMatch(viaSlirp.output, /host service/);
      assert.doesNotMatch(viaSlirp.output, /exit=0/);
      if (hostIp) {
        const viaHostIp = await guestShell(a.agentSocketPath, `curl -sS -m 10 http://${hostIp}:${anyPort}/ 2>&1; echo "exit=$?"`);
        t.diagnostic(`guest -> ${hostIp}:${anyPort}: ${viaHostIp.output.trim().replace(/\n/g, ' | ')}`);
        assert.doesNotMatch(viaHostIp.output, /host service/);
      }
      const counters = (await runProgram('nft', ['list', 'chain', 'inet', GUARD_TABLE, 'deny'])).stdout;
      assert.match(counters, /counter packets [1-9]/);
      const hostReachesMirror = await fetch('http://deb.debian.org/debian/', { signal: AbortSignal.timeout(10_000) }).then(
        (r) => r.status < 500,
        () => false,
      );
      if (!hostReachesMirror) return t.diagnostic('the host cannot reach deb.debian.org: egress not checked');
      const egress = await guestShell(a.agentSocketPath, 'curl -sS -m 30 -o /dev/null -w "%{http_code}" http://deb.debian.org/debian/');
      t.diagnostic(`guest -> deb.debian.org: HTTP ${egress.output}`);
      assert.match(egress.output, /^[23]\d\d$/);
    } finally {
      loopback.close();
      anyAddress.close();
    }
  });

  test('kill leaves no process, socket, overlay or cgroup', async () => {
    const a = clones[0]!;
    const state = await readState(a);
    await rec.driver.kill(a.vmId);
    await assertNothingLeft(a.pid, state, a.runDir);
    const exit = await rec.exitOf(a.vmId);
    assert.equal(exit.expected, true);
    assert.equal(rec.driver.get(a.vmId), undefined);
  });

  test('a QEMU killed from outside is reported as an unexpected exit and cleaned up', async () => {
    const b = clones[1]!;
    const state = await readState(b);
    process.kill(b.pid, 'SIGKILL');
    const exit = await rec.exitOf(b.vmId);
    assert.deepEqual([exit.expected, exit.signal, exit.reason], [false, 'SIGKILL', null]);
    await assertNothingLeft(b.pid, state, b.runDir);
  });

  test('after the server process is killed, recover re-adopts the VMs it is told to keep and kills the rest', async (t) => {
    const runRoot = join(root, 'crashed-run');
    // Whatever fails, no VM of this test outlives it (a live one would hold its transfer area and the run).
    t.after(async () => {
      await createDriver().driver.recover({ runRoot, keep: () => false });
    });
    const server = spawn(process.execPath, ['--import', 'tsx', CRASHING_SERVER, runRoot, snapshot.dir, 'keep-me', 'reap-me'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (chunk) => (output += chunk));
    server.stderr.on('data', (chunk) => (output += chunk));
    const vms = await new Promise<VmInfo[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the crashing server did not restore its VMs:\n${output}`)), 180_000);
      server.stdout.on('data', () => {
        const line = output.split('\n').find((l) => l.startsWith('['));
        if (line) {
          clearTimeout(timer);
          resolve(JSON.parse(line) as VmInfo[]);
        }
      });
      server.once('exit', (code) => reject(new Error(`the crashing server exited (${code}):\n${output}`)));
    });
    server.kill('SIGKILL');
    await new Promise((resolve) => server.once('exit', resolve));
    const [kept, reaped] = vms as [VmInfo, VmInfo];
    assert.equal(await processAlive(kept.pid), true, 'VMs outlive the server that started them');
    assert.equal(await processAlive(reaped.pid), true);
    const reapedState = await readState(reaped);

    const next = createDriver();
    const report = await next.driver.recover({ runRoot, keep: (vm) => vm.vmId === 'keep-me' });
    t.diagnostic(`recovered: adopted ${report.adopted.map((v) => v.vmId)}, killed ${report.killed.map((v) => v.vmId)}, cleaned ${report.cleaned}`);
    assert.deepEqual(
      report.killed.map((vm) => vm.vmId),
      ['reap-me'],
    );
    await assertNothingLeft(reaped.pid, reapedState, reaped.runDir);
    assert.deepEqual(
      report.adopted.map((vm) => [vm.vmId, vm.pid, vm.origin, vm.transferDir]),
      [['keep-me', kept.pid, 'adopted', kept.transferDir]],
    );
    assert.deepEqual(
      next.driver.list().map((vm) => vm.vmId),
      ['keep-me'],
    );
    assert.match((await guestShell(kept.agentSocketPath, 'echo adopted')).output, /adopted/);

    const keptState = await readState(kept);
    await next.driver.kill('keep-me');
    await assertNothingLeft(kept.pid, keptState, kept.runDir);
    assert.deepEqual((await next.driver.recover({ runRoot, keep: () => true })).adopted, []);
  });
});
