/**
 * The start sequence of a boot or a restore, in two steps. `launch`: run directory, cgroup, crash-proof state
 * file, transfer area, overlay, then QEMU spawned paused. `bringUp`: QEMU moved into its cgroup, QMP, then
 * either the incoming device state, `cont`, link and balloon (restore) or `cont` and the console stages (boot),
 * until the agent probe answers. A failure kills the VM, names the stage it died in and carries the tail of its
 * console.
 */
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { chmod, chown, mkdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Accelerator, NetworkMode, StartedVm, VmStage, VolumeAttachment } from '../vm-driver.ts';
import { VmBootError, VmError } from '../vm-errors.ts';
import { buildQemuArgv, seccompPolicy, slotDrives, type QemuMachine } from './command-line.ts';
import { ConsoleStageWatcher, errorLines, readLog } from './console-log.ts';
import { createBlankDisk, createOverlay, linkOrCopyFile } from './disk.ts';
import type { DriverContext, PreparedHost } from './driver-context.ts';
import { transition, vmMarker, type LiveVm } from './live-vm.ts';
import { balloonTargetMb, resizeGuestMemory } from './memory.ts';
import { loadDeviceState } from './migration.ts';
import { childExited, identify, spawnQemu } from './process.ts';
import { QmpClient } from './qmp-client.ts';
import { createRunDir, runPaths, writeStateFile, type VmStateFile } from './run-dir.ts';
import { cleanupVmFiles, describeShutdown, diagnosticTail } from './supervision.ts';
import { createTransferArea } from './transfer-area.ts';
import { announceVolumeSizes, volumeDrives } from './volume-slots.ts';

/**
 * QEMU's memory besides guest RAM, MiB: under TCG mostly the translation cache (capped at 256 MiB by the
 * command line); an idle restored VM measured 74 MiB of private memory in all.
 */
const DEFAULT_OVERHEAD_MB: Record<Accelerator, number> = { tcg: 384, kvm: 128 };
/** Threads: one per vCPU, the main loop, RCU, and a block I/O pool of up to 64. */
const DEFAULT_PIDS_MAX = 256;

/**
 * The disk QEMU writes: a new overlay over `backingPath` (at `path`, default the run directory's), a file taken
 * over as it is (`take`: a paused VM's own layer, linked into the run directory), or a blank one (`blank`: a
 * capture's receiving QEMU, which never runs the guest but must have the same devices).
 */
export type StartDisk =
  | { kind: 'overlay'; path?: string; backingPath: string; backingFormat: 'raw' | 'qcow2' }
  | { kind: 'take'; from: string }
  | { kind: 'blank'; sizeBytes: number };

/** What to start: a cold boot or a restore, already checked by the driver. */
export interface StartParams {
  vmId: string;
  runDir: string;
  machine: QemuMachine;
  network: NetworkMode;
  origin: 'boot' | 'restore';
  memoryMb: number;
  snapshotDir: string | null;
  disk: StartDisk;
  /** Volumes in its slots (the others hold placeholders). */
  volumes: VolumeAttachment[];
  memoryFile: { path: string; shared: boolean } | undefined;
  /** A restore's device state, given to QEMU as fd 3. */
  incomingStatePath?: string;
  /** Runs after QEMU is in its cgroups and before the device state is loaded and the guest runs (`RestoreVmRequest.beforeRun`). */
  beforeRun?: (cgroupPaths: string[]) => Promise<void>;
  /** A restore leaves the guest's link down (`RestoreVmRequest.linkDown`). */
  linkDown?: boolean;
  /** Wait for an incoming migration on a socket (a capture's receiving QEMU); see `capture.ts`. */
  receiving?: boolean;
  /**
   * The transfer share's host side: a capped area (default), or, for a receiving QEMU, an empty directory
   * exported `writable` or not like its source's (the guest never runs there).
   */
  transfer?: { kind: 'area' } | { kind: 'empty'; writable: boolean };
  timeoutMs: number;
  signal: AbortSignal | undefined;
  prepared: PreparedHost;
}

/** A VM whose QEMU was spawned, paused, with the state file it got before the spawn. */
export interface Launched {
  vm: LiveVm;
  child: ChildProcess;
  pendingState: VmStateFile;
}

/** Spawns QEMU for a boot or a restore and waits until the guest is up (or fails with its stage). */
export async function startVm<C>(ctx: DriverContext<C>, params: StartParams): Promise<StartedVm<C>> {
  if (ctx.live.has(params.vmId)) throw new VmError('VM_INVALID_REQUEST', `VM ${params.vmId} already exists`);
  const deadline = Date.now() + params.timeoutMs;
  const vm = await launch(ctx, params);
  return bringUp(ctx, params, vm, deadline);
}

/** The target a restore's balloon deflates to; a cold boot gives the guest all of -m. */
function guestMemoryMb(params: StartParams): number {
  return params.origin === 'restore' ? balloonTargetMb(params.machine.memoryMb, params.memoryMb) : params.machine.memoryMb;
}

/** Makes the VM's files and limits and spawns QEMU paused; on failure removes what it made. */
export async function launch<C>(ctx: DriverContext<C>, params: StartParams): Promise<Launched> {
  const { vmId, machine, prepared } = params;
  const paths = runPaths(params.runDir);
  const vmUser = prepared.vmUser;
  const overlayPath = params.disk.kind === 'overlay' && params.disk.path ? params.disk.path : paths.overlayPath;

  await createRunDir(paths, vmUser);
  let transferWritable = false;
  const startedAtMs = Date.now();
  let cgroupPaths: string[] = [];
  const pendingState: VmStateFile = {
    version: 1,
    vmId,
    pid: 0, // not spawned yet; recovery finds a QEMU of this state by its argv
    startTimeTicks: 0,
    bootId: '',
    startedAtMs,
    accelerator: machine.accelerator,
    vcpuCount: machine.vcpuCount,
    memoryMb: params.memoryMb,
    network: params.network,
    snapshotDir: params.snapshotDir,
    cgroupPaths,
    machine,
    overlayPath,
    volumes: params.volumes,
  };
  let child: ChildProcess | undefined;
  try {
    if (prepared.cgroups) {
      const limits = ctx.options.resourceLimits;
      const overheadMb = limits?.memoryOverheadMb ?? DEFAULT_OVERHEAD_MB[machine.accelerator];
      cgroupPaths = await prepared.cgroups.create(vmId, {
        cpuLimit: Math.min(machine.vcpuCount, prepared.vmCpuCeiling),
        memoryMaxBytes: (guestMemoryMb(params) + overheadMb) * 1024 * 1024,
        pidsMax: limits?.pidsMax ?? DEFAULT_PIDS_MAX,
      });
      pendingState.cgroupPaths = cgroupPaths;
    }
    await writeStateFile(paths.statePath, pendingState);
    // After the state file: a server that dies from here on leaves a VM the reaper cleans up whole.
    const transfer = params.transfer ?? { kind: 'area' };
    if (transfer.kind === 'area') transferWritable = await createTransferArea(paths.transferDir, vmUser);
    else {
      await mkdir(paths.transferDir, { mode: 0o700 });
      if (vmUser) await chown(paths.transferDir, vmUser.uid, vmUser.gid);
      transferWritable = transfer.writable;
    }
    // Recorded with the pid once QEMU runs (bringUp); a reaper does not need it.
    pendingState.transferWritable = transferWritable;
    await prepareDisk(ctx.qemuImgBinary, params.disk, overlayPath, vmUser);
    const drives = await volumeDrives(ctx.qemuImgBinary, params.volumes, params.runDir, vmUser);
    const argv = buildQemuArgv(machine, {
      vmId,
      qmpSocketPath: paths.qmpSocketPath,
      agentSocketPath: paths.agentSocketPath,
      consoleLogPath: paths.consoleLogPath,
      overlayPath,
      memoryFile: params.memoryFile,
      network: params.network,
      transfer: { dir: paths.transferDir, writable: transferWritable },
      volumeSlots: slotDrives(drives),
      incoming: params.incomingStatePath !== undefined || params.receiving === true,
      startPaused: true,
      runAsUser: vmUser?.name ?? null,
      seccomp: ctx.options.seccomp === false ? null : seccompPolicy(vmUser !== null),
      ...(ctx.options.tcgCacheMb !== undefined ? { tcgCacheMb: ctx.options.tcgCacheMb } : {}),
    });
    const stateFd = params.incomingStatePath ? openSync(params.incomingStatePath, 'r') : undefined;
    try {
      child = spawnQemu({ binary: ctx.qemuBinary, argv, logPath: paths.qemuLogPath, extraFds: stateFd === undefined ? [] : [stateFd] });
    } finally {
      if (stateFd !== undefined) closeSync(stateFd);
    }
  } catch (error) {
    await cleanupVmFiles(paths.runDir, cgroupPaths, params.snapshotDir);
    throw error instanceof VmError ? error : new VmBootError(vmId, 'spawn', (error as Error).message, '', { cause: error });
  }

  const vm: LiveVm = {
    info: {
      vmId,
      pid: child.pid ?? 0,
      runDir: paths.runDir,
      agentSocketPath: paths.agentSocketPath,
      consoleLogPath: paths.consoleLogPath,
      transferDir: transferWritable ? paths.transferDir : null,
      accelerator: machine.accelerator,
      vcpuCount: machine.vcpuCount,
      memoryMb: params.memoryMb,
      network: params.network,
      origin: params.origin,
      startedAtMs,
      snapshotCapable: params.snapshotDir !== null,
      volumes: params.volumes.map((volume) => ({ ...volume })),
      cgroupPaths,
    },
    paths,
    identity: { pid: child.pid ?? 0, startTimeTicks: 0, bootId: '' },
    marker: vmMarker(vmId),
    child,
    qmp: null,
    cgroupPaths,
    snapshotDir: params.snapshotDir,
    machine,
    overlayPath,
    transferWritable,
    capturing: false,
    state: 'starting',
    shutdownReason: null,
    exited: childExited(child),
    finished: Promise.resolve(),
    startSettled: Promise.resolve(), // replaced by bringUp before the VM is registered
  };
  return { vm, child, pendingState };
}

/** Makes the disk QEMU will write (see `StartDisk`), owned by the VM user: QEMU reopens it by path after a restore. */
async function prepareDisk(qemuImgBinary: string, disk: StartDisk, overlayPath: string, owner: { uid: number; gid: number } | null): Promise<void> {
  if (disk.kind === 'overlay') {
    await createOverlay({ qemuImgBinary, overlayPath, backingPath: disk.backingPath, backingFormat: disk.backingFormat, owner });
    return;
  }
  if (disk.kind === 'blank') await createBlankDisk({ qemuImgBinary, path: overlayPath, sizeBytes: disk.sizeBytes, owner });
  else await linkOrCopyFile(disk.from, overlayPath);
  await chmod(overlayPath, 0o600);
  if (owner) await chown(overlayPath, owner.uid, owner.gid);
}

/**
 * Takes over a QEMU that `launch` spawned: knows it by its identity (pid + start time), moves it into its cgroup,
 * records its pid in the state file and connects QMP. Resolves with the connected QMP client.
 */
export async function attachQemu({ vm, child, pendingState }: Launched, prepared: PreparedHost, deadline: number, signal?: AbortSignal): Promise<QmpClient> {
  const identity = child.pid ? await identify(child.pid) : undefined;
  if (!identity) throw new Error('QEMU exited at once');
  vm.identity = identity;
  if (prepared.cgroups) await prepared.cgroups.addProcess(vm.cgroupPaths, identity.pid);
  await writeStateFile(vm.paths.statePath, { ...pendingState, pid: identity.pid, startTimeTicks: identity.startTimeTicks, bootId: identity.bootId });
  const qmp = await QmpClient.connect(vm.paths.qmpSocketPath, { timeoutMs: Math.max(1, deadline - Date.now()), ...(signal ? { signal } : {}) });
  vm.qmp = qmp;
  qmp.on('event', (event) => {
    if (event.event === 'SHUTDOWN') vm.shutdownReason = String(event.data.reason ?? 'shutdown');
  });
  return qmp;
}

/** Registers the spawned VM and brings it up; on any failure kills it and throws a `VmBootError`. */
async function bringUp<C>(ctx: DriverContext<C>, params: StartParams, { vm, child, pendingState }: Launched, deadline: number): Promise<StartedVm<C>> {
  const { paths } = vm;
  const { vmId, prepared } = params;
  const startedAtMs = vm.info.startedAtMs;
  let settleStart = () => undefined as void;
  vm.startSettled = new Promise<void>((resolve) => (settleStart = resolve));
  ctx.register(vm);

  const emitStage = (stage: VmStage) => ctx.events.emit('stage', { vmId, stage, elapsedMs: Date.now() - startedAtMs });
  const watcher = new ConsoleStageWatcher(paths.consoleLogPath, emitStage);
  const abort = new AbortController();
  const onCallerAbort = () => abort.abort(new Error('cancelled by the caller'));
  params.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const timer = setTimeout(() => abort.abort(new Error(`not up within ${params.timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
  let stage: VmStage = 'spawn';
  const { agentProbe } = ctx.options;
  const transferDir = vm.info.transferDir;
  // The probe's handshake; if the start fails after all, what it produced is released (also when it
  // completes only after the failure).
  let probe: Promise<C> | undefined;
  const startProbe = (): Promise<C> => (probe = agentProbe.waitUntilReady(paths.agentSocketPath, { vmId, signal: abort.signal, transferDir }));
  try {
    const run = async (): Promise<C> => {
      const qmp = await attachQemu({ vm, child, pendingState }, prepared, deadline, abort.signal);
      emitStage('spawn');
      if (params.incomingStatePath) {
        stage = 'restore';
        // QEMU runs paused in its cgroups, nothing of the guest (nor of its network stack) is loaded yet: what
        // the caller puts in place for those cgroups (egress rules) holds from the guest's first instruction.
        if (params.beforeRun) {
          await params.beforeRun(vm.cgroupPaths).catch((error: Error) => {
            throw new Error(`preparing the VM's network before it runs failed: ${error.message}`, { cause: error });
          });
        }
        // Probe the agent while the guest is still paused: the probe's first hello waits in the socket and
        // reaches the agent as soon as the guest runs, instead of after one of the probe's retry back-offs.
        const agentUp = startProbe().then(
          (connection) => {
            emitStage('agent');
            return connection;
          },
          (error: Error) => Promise.reject(Object.assign(error, { vmStage: 'agent' as VmStage })),
        );
        agentUp.catch(() => undefined); // awaited below, after the restore itself
        await loadDeviceState(qmp, Math.max(1, deadline - Date.now()));
        // Before `cont`: the guest's first look at a volume must already see its size (the resize interrupt is
        // pending when its vCPUs run).
        await announceVolumeSizes(qmp, params.volumes);
        // Down whatever state the snapshot saved it in: QEMU drops the guest's frames until `setLink` raises it.
        if (params.network === 'user' && params.linkDown) await qmp.execute('set_link', { name: 'nic0', up: false });
        await qmp.execute('cont');
        emitStage('restore');
        // The NIC was saved without a backend (link down); tell the guest the link is up now, unless the caller
        // raises it later (`linkDown`: QEMU drops what the guest sends while it is down).
        if (params.network === 'user' && !params.linkDown) await qmp.execute('set_link', { name: 'nic0', up: true });
        stage = 'agent';
        // Always set the balloon: the snapshot may have been saved with part of its RAM in it.
        const memoryDone = resizeGuestMemory(qmp, guestMemoryMb(params), Math.max(1, deadline - Date.now())).then(
          () => emitStage('memory'),
          (error: Error) => Promise.reject(Object.assign(error, { vmStage: 'memory' as VmStage })),
        );
        const [connection] = await Promise.all([agentUp, memoryDone]);
        return connection;
      }
      stage = 'kernel';
      watcher.start();
      await qmp.execute('cont');
      return await startProbe();
    };
    const agent = await Promise.race([
      run(),
      vm.exited.then((exit) => {
        throw new Error(`QEMU exited (${exit.signal ?? `code ${exit.exitCode}`})${vm.shutdownReason ? `: ${describeShutdown(vm.shutdownReason)}` : ''}`);
      }),
      new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(abort.signal.reason as Error), { once: true })),
    ]);
    // A kill during the start already abandoned it: that is a failed start, not a VM to hand out.
    transition(vm, 'up');
    vm.info.pid = vm.identity.pid;
    return { ...vm.info, agent };
  } catch (error) {
    void probe?.then((connection) => agentProbe.release(connection)).catch(() => undefined);
    abort.abort(error);
    let failedStage: VmStage = (error as { vmStage?: VmStage }).vmStage ?? stage;
    if (failedStage === 'kernel') failedStage = await watcher.currentStage();
    const reasons = [(error as Error).message];
    // A QMP or agent error is often only the symptom of QEMU dying; say so first when it did.
    const exit = await Promise.race([vm.exited, sleep(200).then(() => undefined)]);
    if (exit && !reasons[0]!.startsWith('QEMU exited')) reasons.unshift(`QEMU exited (${exit.signal ?? `code ${exit.exitCode}`})`);
    const consoleText = await readLog(paths.consoleLogPath);
    reasons.push(...errorLines(consoleText).slice(-3));
    const tail = await diagnosticTail(paths);
    transition(vm, 'abandon');
    settleStart();
    child.kill('SIGKILL');
    await vm.finished;
    throw new VmBootError(vmId, failedStage, reasons.join('; '), tail, { cause: error });
  } finally {
    settleStart();
    clearTimeout(timer);
    watcher.stop();
    params.signal?.removeEventListener('abort', onCallerAbort);
  }
}
