/**
 * Capturing a running VM into a snapshot directory: a live snapshot (the VM runs on) or a pause (it ends).
 *
 * A VM restored from a snapshot maps that snapshot's RAM file copy-on-write, so its memory cannot be saved the
 * way a snapshot source's is (`x-ignore-shared`: the RAM is already in the file). It is migrated instead into a
 * second QEMU started for the purpose: the same machine and devices, its RAM a shared file in the new snapshot
 * directory, never running the guest. With `live`, the source keeps running while its memory is copied and stops
 * only at `pre-switchover` (`pause-before-switchover`), for the last dirty pages and its device state; without
 * it, the source is stopped for the whole copy. Either way, while it is stopped, with its disk drained and
 * flushed, its disk layer becomes the snapshot's (a hard link into the snapshot directory) and, for a VM that runs
 * on, QEMU switches to a new layer over it (`blockdev-snapshot-sync`), so memory and disk are of the same instant.
 * The receiver then saves its device state like any snapshot source (`saveDeviceState`) and quits. The result
 * restores exactly like a template's snapshot: RAM mapped copy-on-write, a new overlay over the frozen layer.
 *
 * Live copying relies on QEMU tracking the pages the guest writes meanwhile. Under TCG (QEMU 7.2) that loses
 * writes: of 12 clones of live captures of a busy guest, 8 crashed (kernel oopses, segfaults); of 12 clones of
 * captures with the guest stopped for the copy, none. So only KVM, whose dirty log is the hardware's, copies
 * live by default (`QemuDriverOptions.liveCapture`); under TCG the guest stops for the copy (~1.5–2.5 s for a
 * 512 MiB guest holding ~220 MiB).
 *
 * Every layer's header names its backing file by the snapshot directory's path, which lives as long as the
 * snapshot; so a snapshot that a VM's layers or another snapshot's layer build on must be kept (the caller
 * refuses to delete it).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CaptureResult, CaptureSnapshotRequest } from '../vm-driver.ts';
import { VmError } from '../vm-errors.ts';
import { createOverlay, linkOrCopyFile, ROOT_DRIVE_ID, rootDiskBytes } from './disk.ts';
import type { DriverContext, PreparedHost } from './driver-context.ts';
import { transition, type LiveVm } from './live-vm.ts';
import { saveDeviceState, waitForMigration, waitForMigrationStatus } from './migration.ts';
import type { QmpClient, QmpEvent } from './qmp-client.ts';
import { writeStateFile, readStateFile } from './run-dir.ts';
import { readSnapshotManifest, removeIncompleteSnapshot, sealSnapshot, snapshotInfo, snapshotPaths, type SnapshotManifest } from './snapshot-files.ts';
import { attachQemu, launch } from './start-sequence.ts';

/** Default deadline of a capture: copying a large guest's memory under TCG on a busy host takes seconds. */
const DEFAULT_TIMEOUT_MS = 180_000;
/**
 * Migration limits: no bandwidth cap (both ends are on this host; QEMU's default cap is 128 MiB/s), and a short
 * final stop (QEMU stops the source once what is left can be sent within this).
 */
const MIGRATION_PARAMETERS = { 'max-bandwidth': 64 * 1024 ** 3, 'downtime-limit': 50 };
/** A layer a live capture moved the VM to: `disk-<n>.qcow2` in its run directory (recovery knows the name). */
const LAYER_NAME = /^disk-(\d+)\.qcow2$/;

/** Captures `vm` into `request.snapshotDir` (see the module comment). */
export async function captureVm<C>(
  ctx: DriverContext<C>,
  vm: LiveVm,
  request: CaptureSnapshotRequest,
  prepared: PreparedHost,
  live: boolean,
): Promise<CaptureResult> {
  const { qmp, machine, overlayPath } = vm;
  if (vm.state !== 'running' || !qmp) throw new VmError('VM_BAD_STATE', `VM ${vm.info.vmId} is ${vm.state}: only a running VM can be captured`);
  if (!machine || !overlayPath) {
    throw new VmError(
      'VM_BAD_STATE',
      `VM ${vm.info.vmId} was started by an older sandboxd that did not record its machine: it cannot be captured (it runs on)`,
    );
  }
  if (vm.capturing) throw new VmError('VM_BAD_STATE', `a capture of VM ${vm.info.vmId} is already under way`);
  // A capture of a VM with volumes mounted would hold their filesystems' state in its memory (page cache, open
  // files) while the images go on changing under other VMs: restoring it would corrupt them. The caller must say
  // it unmounted them, or (a pause) that they stay this VM's alone until its restore puts them back.
  if (vm.info.volumes.length > 0 && request.volumes !== 'unmounted' && !(request.volumes === 'held' && request.then === 'stop')) {
    throw new VmError(
      'VM_BAD_STATE',
      `VM ${vm.info.vmId} has volumes attached: it is captured only once they are unmounted in the guest, or held for its resume by a pause`,
    );
  }
  const dir = request.snapshotDir;
  await mkdir(dir, { recursive: true, mode: 0o755 });
  if (await readSnapshotManifest(dir)) throw new VmError('VM_INVALID_REQUEST', `${dir} already holds a snapshot`);
  await removeIncompleteSnapshot(dir);

  vm.capturing = true;
  const started = performance.now();
  const deadline = Date.now() + (request.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const remaining = () => Math.max(1, deadline - Date.now());
  const files = snapshotPaths(dir);
  const stopEvents: QmpEvent[] = [];
  const onEvent = (event: QmpEvent) => {
    if (event.event === 'STOP' || event.event === 'RESUME') stopEvents.push(event);
  };
  qmp.on('event', onEvent);
  let receiver: LiveVm | undefined;
  let migrating = false;
  let switchedTo: string | undefined;
  try {
    const diskSizeBytes = await rootDiskBytes(qmp);
    const { vm: receiving, qmp: receiverQmp, socketPath } = await startReceiver(ctx, vm, dir, diskSizeBytes, prepared, deadline, request.signal);
    receiver = receiving;

    await qmp.execute('migrate-set-capabilities', {
      capabilities: [
        // The source's RAM is private (copy-on-write over its snapshot): it must travel in the stream. A
        // restored VM still has this set from its own incoming migration.
        { capability: 'x-ignore-shared', state: false },
        { capability: 'pause-before-switchover', state: true },
      ],
    });
    await qmp.execute('migrate-set-parameters', MIGRATION_PARAMETERS);
    if (request.then === 'stop' || !live) {
      // A pause gains nothing from running while the memory is copied; without live copying, nothing may change.
      await qmp.execute('stop');
    }
    migrating = true;
    await qmp.execute('migrate', { uri: `unix:${socketPath}` });
    await waitForMigrationStatus(qmp, 'pre-switchover', remaining());

    // Stopped, its disk drained and flushed: the layer it wrote until now becomes the snapshot's.
    await linkOrCopyFile(overlayPath, files.overlayPath);
    if (request.then === 'run') {
      const next = nextLayerPath(vm.paths.runDir, overlayPath);
      await createOverlay({
        qemuImgBinary: ctx.qemuImgBinary,
        overlayPath: next,
        backingPath: files.overlayPath,
        backingFormat: 'qcow2',
        sizeBytes: diskSizeBytes,
        owner: prepared.vmUser,
      });
      await qmp.execute('blockdev-snapshot-sync', { device: ROOT_DRIVE_ID, 'snapshot-file': next, format: 'qcow2', mode: 'existing' });
      switchedTo = next;
    }
    await qmp.execute('migrate-continue', { state: 'pre-switchover' });
    await Promise.all([waitForMigration(qmp, remaining()), waitForMigration(receiverQmp, remaining())]);
    migrating = false;
    if (request.then === 'run') await resumeSource(ctx, vm, qmp);
    const pausedMs = stoppedMs(stopEvents) ?? performance.now() - started;

    const stateBytes = await saveDeviceState(receiverQmp, {
      socketPath: receiving.paths.migrationSocketPath,
      statePath: files.statePath,
      owner: prepared.vmUser,
      timeoutMs: remaining(),
    });
    await receiverQmp.execute('quit').catch(() => undefined); // the answer may race QEMU's exit
    const manifest: SnapshotManifest = {
      version: 1,
      machine,
      qemuVersion: prepared.qemuVersion,
      minMemoryMb: vm.info.memoryMb,
      savedAtMs: Date.now(),
      stateBytes,
      network: vm.info.network,
      transferWritable: vm.transferWritable,
    };
    await sealSnapshot(dir, manifest);
    await endReceiver(receiving);
    receiver = undefined;

    if (switchedTo) await recordLayer(vm, switchedTo);
    if (request.then === 'stop') {
      // Its disk is the snapshot's now; the process is done. Its end is the capture's, not one to report.
      transition(vm, 'consume');
      await qmp.execute('quit').catch(() => undefined);
      await Promise.race([vm.exited, sleep(5000)]);
      if (vm.child && vm.child.exitCode === null) vm.child.kill('SIGKILL');
      await vm.finished;
    }
    const [memory, disk] = await Promise.all([stat(files.memoryPath), stat(files.overlayPath)]);
    return {
      ...snapshotInfo(dir, manifest),
      pausedMs: Math.round(request.then === 'stop' ? performance.now() - started : pausedMs),
      durationMs: Math.round(performance.now() - started),
      memoryBytes: memory.blocks * 512,
      diskBytes: disk.blocks * 512,
      diskSizeBytes,
      diskPath: files.overlayPath,
    };
  } catch (error) {
    await rollBack({ qmp, vm, migrating, switchedTo, previousLayer: overlayPath });
    if (receiver) await endReceiver(receiver);
    if (!(await readSnapshotManifest(dir))) await rm(dir, { recursive: true, force: true });
    throw new VmError('VM_OPERATION_FAILED', `capturing VM ${vm.info.vmId} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    qmp.off('event', onEvent);
    vm.capturing = false;
  }
}

/**
 * Lets the source run on after a complete migration. Should its QEMU die at this point (once in a CI run of ~40
 * captures, `cont` read ECONNRESET), the snapshot is still whole: the receiver holds the memory and device state
 * and the disk layer is linked. So the capture completes and the VM's end is reported like any crash (with its
 * console and QEMU log); any other failure of `cont` fails the capture.
 */
async function resumeSource<C>(ctx: DriverContext<C>, vm: LiveVm, qmp: QmpClient): Promise<void> {
  try {
    await qmp.execute('cont');
  } catch (error) {
    const exited = await Promise.race([vm.exited.then(() => true), sleep(2000).then(() => false)]);
    if (!exited) throw error;
    // Its console and QEMU log travel with its exit event (supervision.ts); its run directory is being removed.
    ctx.warn(
      'CAPTURE_SOURCE_DIED',
      `VM ${vm.info.vmId}'s QEMU ended when told to run on after its capture (${(error as Error).message}); the snapshot is complete`,
      vm.info.vmId,
    );
  }
}

/**
 * Starts the receiving QEMU: the source's machine and devices (a blank disk of the same size: it never runs the
 * guest, and device state does not name files), its RAM a shared file in the snapshot directory, listening for
 * the migration on a socket in its own transfer directory (QEMU creates the socket after dropping privileges,
 * and that is the one directory of a run directory it owns). It is tracked like a VM, so a crashed server's
 * successor reaps it, and what it leaves in the snapshot directory while no manifest completes it.
 */
async function startReceiver<C>(
  ctx: DriverContext<C>,
  source: LiveVm,
  dir: string,
  diskSizeBytes: number,
  prepared: PreparedHost,
  deadline: number,
  signal: AbortSignal | undefined,
) {
  const machine = source.machine!;
  const vmId = `${source.info.vmId.slice(0, 48)}-cap${randomBytes(3).toString('hex')}`;
  const launched = await launch(ctx, {
    vmId,
    runDir: join(dirname(source.paths.runDir), vmId),
    machine,
    network: source.info.network,
    // It is charged for the whole RAM file it writes: give it the limits of a cold boot of this machine.
    origin: 'boot',
    memoryMb: machine.memoryMb,
    snapshotDir: dir,
    disk: { kind: 'blank', sizeBytes: diskSizeBytes },
    // Placeholders in every slot: the device state names no image, and a snapshot holds no volume (see captureVm).
    volumes: [],
    memoryFile: { path: snapshotPaths(dir).memoryPath, shared: true },
    receiving: true,
    transfer: { kind: 'empty', writable: source.transferWritable },
    timeoutMs: Math.max(1, deadline - Date.now()),
    signal,
    prepared,
  });
  const vm = launched.vm;
  // Never handed out: its end is the capture's business, not an exit to report.
  vm.state = 'consumed';
  ctx.register(vm);
  try {
    const qmp = await attachQemu(launched, prepared, deadline, signal);
    const socketPath = join(vm.paths.transferDir, 'in.sock');
    await qmp.execute('migrate-incoming', { uri: `unix:${socketPath}` });
    return { vm, qmp, socketPath };
  } catch (error) {
    await endReceiver(vm);
    throw error;
  }
}

/** Ends the receiving QEMU and waits until its run directory and cgroup are gone. */
async function endReceiver(vm: LiveVm): Promise<void> {
  await Promise.race([vm.exited, sleep(2000)]);
  vm.child?.kill('SIGKILL');
  await vm.finished;
}

/**
 * Puts the source back as it was after a failed capture (it was running): the migration cancelled, the guest
 * running again, and, if its disk had been switched to a new layer over the snapshot's,
 * that layer's header pointing at the previous layer's own name in the run directory (the same file), since the
 * snapshot directory is about to go.
 */
async function rollBack(state: { qmp: QmpClient; vm: LiveVm; migrating: boolean; switchedTo: string | undefined; previousLayer: string }): Promise<void> {
  const { qmp, vm } = state;
  if (state.migrating) await qmp.execute('migrate_cancel').catch(() => undefined);
  if (state.switchedTo) {
    // It runs on the new layer either way; only a later reopen of its disk (a resume) reads the header.
    await repointLayer(qmp, state.previousLayer).catch(() => undefined);
    await recordLayer(vm, state.switchedTo);
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const status = await qmp.execute<{ status: string }>('query-status').catch(() => undefined);
    if (!status || status.status === 'running') return;
    if (status.status !== 'finish-migrate') {
      await qmp.execute('cont').catch(() => undefined);
      return;
    }
    await sleep(20);
  }
}

/** Records the layer QEMU writes now, also in the state file (a re-adopted VM is captured from it). */
async function recordLayer(vm: LiveVm, path: string): Promise<void> {
  vm.overlayPath = path;
  const state = await readStateFile(vm.paths.statePath);
  if (state) await writeStateFile(vm.paths.statePath, { ...state, overlayPath: path });
}

/** Sets the backing file name recorded in the header of the layer QEMU writes now. */
async function repointLayer(qmp: QmpClient, backingPath: string): Promise<void> {
  const devices = await qmp.execute<{ device: string; inserted?: { 'node-name': string } }[]>('query-block');
  const node = devices.find((device) => device.device === ROOT_DRIVE_ID)?.inserted?.['node-name'];
  if (!node) throw new Error(`QEMU has no drive ${ROOT_DRIVE_ID}`);
  await qmp.execute('change-backing-file', { device: ROOT_DRIVE_ID, 'image-node-name': node, 'backing-file': backingPath });
}

/** The name of the layer after `current` in the run directory: `disk-<n+1>.qcow2`. */
function nextLayerPath(runDir: string, current: string): string {
  const n = Number(LAYER_NAME.exec(basename(current))?.[1] ?? 0);
  return join(runDir, `disk-${n + 1}.qcow2`);
}

/** How long the guest was stopped, from QEMU's own STOP and RESUME events (their timestamps are QEMU's clock). */
function stoppedMs(events: QmpEvent[]): number | undefined {
  const stop = events.find((event) => event.event === 'STOP');
  const resume = events.findLast((event) => event.event === 'RESUME');
  if (!stop || !resume) return undefined;
  const at = (event: QmpEvent) => event.timestamp.seconds * 1000 + event.timestamp.microseconds / 1000;
  return at(resume) - at(stop);
}
