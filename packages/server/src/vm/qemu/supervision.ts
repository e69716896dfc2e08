/**
 * Supervision and clean-up: waits for each VM's process to end, removes what it left (run directory,
 * transfer area, cgroups, an incomplete snapshot), reports the end as its state says, and keeps the logs of
 * live VMs under their cap.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { removeCgroups } from './cgroup.ts';
import { capLogFile, readTail } from './console-log.ts';
import type { DriverContext } from './driver-context.ts';
import { exitToReport, transition, type LiveVm } from './live-vm.ts';
import { RUN_FILES, type RunPaths } from './run-dir.ts';
import { removeIncompleteSnapshot } from './snapshot-files.ts';
import { removeTransferArea } from './transfer-area.ts';

const DEFAULT_CONSOLE_LOG_MAX_BYTES = 4 * 1024 * 1024;

/** Waits for the VM's process to end, then removes what it left and reports the exit. */
export async function superviseExit<C>(ctx: DriverContext<C>, vm: LiveVm): Promise<void> {
  const exit = await vm.exited;
  await vm.startSettled; // a failing start reads the logs before they go
  const report = exitToReport(vm.state);
  const tail = report ? await diagnosticTail(vm.paths) : '';
  vm.qmp?.close();
  // A consumed VM's snapshot files are the snapshot; any other snapshot source's are an incomplete one.
  await cleanupVmFiles(vm.paths.runDir, vm.cgroupPaths, vm.state === 'consumed' ? null : vm.snapshotDir).catch((error: Error) =>
    ctx.warn('CLEANUP_FAILED', `cleaning up after VM ${vm.info.vmId}: ${error.message}`, vm.info.vmId),
  );
  transition(vm, 'end');
  ctx.live.delete(vm.info.vmId);
  if (!report) return;
  ctx.events.emit('exit', {
    vmId: vm.info.vmId,
    pid: vm.identity.pid,
    expected: report.expected,
    exitCode: exit.exitCode,
    signal: exit.signal,
    reason: vm.shutdownReason,
    consoleTail: tail,
  });
}

/** The last lines of the console and of QEMU's own log, for errors and exit events. */
export async function diagnosticTail(paths: RunPaths): Promise<string> {
  const [consoleTail, qemuTail] = await Promise.all([readTail(paths.consoleLogPath, 30), readTail(paths.qemuLogPath, 10)]);
  return [consoleTail && `[console]\n${consoleTail}`, qemuTail && `[qemu]\n${qemuTail}`].filter(Boolean).join('\n');
}

/** Cuts every live VM's console and QEMU log that grew past the cap (a guest printing forever). */
export async function capLogs<C>(ctx: DriverContext<C>): Promise<void> {
  const maxBytes = ctx.options.consoleLogMaxBytes ?? DEFAULT_CONSOLE_LOG_MAX_BYTES;
  for (const vm of ctx.live.values()) {
    for (const path of [vm.paths.consoleLogPath, vm.paths.qemuLogPath]) {
      if (await capLogFile(path, maxBytes).catch(() => false)) ctx.warn('CONSOLE_LOG_CUT', `${path} exceeded ${maxBytes} bytes and was cut`, vm.info.vmId);
    }
  }
}

/** Removes a dead VM's run directory (sockets, overlay, logs, state), its cgroups and an incomplete snapshot. */
export async function cleanupVmFiles(runDir: string, cgroupPaths: string[], snapshotDir: string | null): Promise<void> {
  await removeCgroups(cgroupPaths);
  await removeTransferArea(join(runDir, RUN_FILES.transfer));
  if (snapshotDir) await removeIncompleteSnapshot(snapshotDir);
  await rm(runDir, { recursive: true, force: true });
}

/** QMP SHUTDOWN reasons in words (with -no-reboot and panic=-1 a guest panic arrives as a reset). */
export function describeShutdown(reason: string): string {
  const words: Record<string, string> = {
    'guest-reset': 'the guest rebooted (with panic=-1 that is usually a kernel panic, or PID 1 exiting)',
    'guest-shutdown': 'the guest powered off',
    'guest-panic': 'the guest kernel panicked',
    'host-signal': 'QEMU was signalled',
    'host-qmp-quit': 'QEMU was told to quit',
  };
  return `${reason}, ${words[reason] ?? 'see the console tail'}`;
}
