/**
 * Recovery after a server restart: each run directory under the run root is a VM an earlier server process
 * started. A live one the caller wants is re-adopted (QMP reconnected, its end watched through /proc since it
 * is not our child); every other is killed, and what dead ones left is removed.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FoundVm, RecoverRequest, RecoveryReport, VmInfo } from '../vm-driver.ts';
import type { DriverContext } from './driver-context.ts';
import { vmMarker, type ExitRecord, type LiveVm } from './live-vm.ts';
import { findProcesses, identify, isSameProcess, killAndWait, type ProcessIdentity } from './process.ts';
import { QmpClient } from './qmp-client.ts';
import { readStateFile, RUN_FILES, runPaths, type RunPaths, type VmStateFile } from './run-dir.ts';
import { cleanupVmFiles } from './supervision.ts';
import { isTransferArea } from './transfer-area.ts';

/** How often an adopted VM (not our child) is checked for having exited. */
const ADOPTED_POLL_MS = 1000;

/** Re-adopts or kills the VMs in `request.runRoot` that this driver does not run, and cleans up dead ones. */
export async function recoverRunRoot<C>(ctx: DriverContext<C>, request: RecoverRequest): Promise<RecoveryReport> {
  const report: RecoveryReport = { adopted: [], killed: [], cleaned: [] };
  let entries: string[];
  try {
    entries = await readdir(request.runRoot);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return report;
    throw error;
  }
  for (const entry of entries) {
    const runDir = join(request.runRoot, entry);
    if ([...ctx.live.values()].some((vm) => vm.paths.runDir === runDir)) continue;
    let paths: RunPaths;
    try {
      paths = runPaths(runDir);
    } catch {
      continue;
    }
    const state = await readStateFile(paths.statePath);
    if (!state) {
      // A run directory whose VM never got a state file: created, maybe an overlay, nothing ran.
      if (await onlyRunFiles(runDir)) {
        await rm(runDir, { recursive: true, force: true });
        report.cleaned.push(runDir);
      }
      continue;
    }
    const marker = vmMarker(state.vmId);
    const found: FoundVm = { vmId: state.vmId, runDir, pid: state.pid, startedAtMs: state.startedAtMs, vcpuCount: state.vcpuCount, memoryMb: state.memoryMb };
    const identity: ProcessIdentity = { pid: state.pid, startTimeTicks: state.startTimeTicks, bootId: state.bootId };
    if (state.pid === 0) {
      // The server died between spawning QEMU and recording its pid: find it by its argv.
      for (const pid of await findProcesses([`${marker},`, paths.qmpSocketPath])) {
        const orphan = await identify(pid);
        if (orphan) await killAndWait(orphan, marker);
      }
    } else if (await isSameProcess(identity, marker)) {
      if (request.keep(found)) {
        const adopted = await adopt(ctx, state, paths, identity).catch(() => undefined);
        if (adopted) {
          report.adopted.push(adopted);
          continue;
        }
      }
      await killAndWait(identity, marker);
      report.killed.push(found);
      await cleanupVmFiles(paths.runDir, state.cgroupPaths, state.snapshotDir);
      continue;
    }
    await cleanupVmFiles(paths.runDir, state.cgroupPaths, state.snapshotDir);
    report.cleaned.push(runDir);
  }
  return report;
}

/** Re-adopts a VM left by an earlier server process: it is `running` from here on. */
async function adopt<C>(ctx: DriverContext<C>, state: VmStateFile, paths: RunPaths, identity: ProcessIdentity): Promise<VmInfo> {
  const qmp = await QmpClient.connect(paths.qmpSocketPath, { timeoutMs: 5000 });
  const status = await qmp.execute<{ status: string }>('query-status');
  if (status.status !== 'running') {
    qmp.close();
    throw new Error(`VM ${state.vmId} is ${status.status}, not running`);
  }
  const marker = vmMarker(state.vmId);
  const exited = new Promise<ExitRecord>((resolve) => {
    // Not our child: no exit status. QMP closes when QEMU exits; poll /proc as well.
    const check = async () => {
      if (!(await isSameProcess(identity, marker))) {
        clearInterval(poll);
        resolve({ exitCode: null, signal: null });
      }
    };
    const poll = setInterval(() => void check(), ADOPTED_POLL_MS);
    poll.unref();
    qmp.once('close', () => void sleep(50).then(check));
  });
  const vm: LiveVm = {
    info: {
      vmId: state.vmId,
      pid: identity.pid,
      runDir: paths.runDir,
      agentSocketPath: paths.agentSocketPath,
      consoleLogPath: paths.consoleLogPath,
      transferDir: (await isTransferArea(paths.transferDir)) ? paths.transferDir : null,
      accelerator: state.accelerator,
      vcpuCount: state.vcpuCount,
      memoryMb: state.memoryMb,
      network: state.network,
      origin: 'adopted',
      startedAtMs: state.startedAtMs,
      snapshotCapable: false, // the migration socket and device state plumbing belonged to the old process
      volumes: state.volumes ?? [],
      cgroupPaths: state.cgroupPaths,
    },
    paths,
    identity,
    marker,
    child: null,
    qmp,
    cgroupPaths: state.cgroupPaths,
    snapshotDir: state.snapshotDir,
    // Older state files lack what a capture needs; such a VM runs on but cannot be captured.
    machine: state.machine ?? null,
    overlayPath: state.overlayPath ?? null,
    transferWritable: state.transferWritable ?? false,
    capturing: false,
    state: 'running',
    shutdownReason: null,
    exited,
    finished: Promise.resolve(),
    startSettled: Promise.resolve(),
  };
  qmp.on('event', (event) => {
    if (event.event === 'SHUTDOWN') vm.shutdownReason = String(event.data.reason ?? 'shutdown');
  });
  ctx.register(vm);
  return { ...vm.info };
}

/** True when a directory holds nothing but files a run directory may have (safe to remove as ours). */
async function onlyRunFiles(dir: string): Promise<boolean> {
  const known = new Set<string>(Object.values(RUN_FILES));
  try {
    // disk-<n>.qcow2: the layers live captures moved the VM to (capture.ts).
    return (await readdir(dir)).every((name) => known.has(name) || name.endsWith('.tmp') || /^disk-\d+\.qcow2$/.test(name));
  } catch {
    return false;
  }
}
