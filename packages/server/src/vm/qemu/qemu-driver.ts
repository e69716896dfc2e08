/**
 * The QEMU implementation of the VmDriver: microvm machines, one QEMU process per VM, started by argv as an
 * unprivileged user under seccomp, in its own cgroup, with a QMP client for control and the guest agent on a
 * virtio-serial port. Cold boots, snapshots (RAM in a file mapped copy-on-write by clones, device state by
 * migration), restores, kills and recovery after a server crash. The choices and measurements are in
 * `../README.md`.
 */
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { openSync, closeSync } from 'node:fs';
import { mkdir, readdir, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  MAX_MEMORY_MB,
  MIN_MEMORY_MB,
  VCPU_COUNTS,
  type Accelerator,
  type AcceleratorRequest,
  type AgentProbe,
  type BootVmRequest,
  type FoundVm,
  type GuestImageFiles,
  type HostReport,
  type NetworkMode,
  type RecoverRequest,
  type RecoveryReport,
  type RestoreVmRequest,
  type SaveSnapshotRequest,
  type SnapshotInfo,
  type VmDriver,
  type VmDriverEvents,
  type StartedVm,
  type VmInfo,
  type VmStage,
} from '../vm-driver.ts';
import { VmBootError, VmError } from '../vm-errors.ts';
import { resolveAccelerator } from './accel-probe.ts';
import { detectCgroups, removeCgroups, type CgroupManager } from './cgroup.ts';
import { buildQemuArgv, kernelCommandLine, seccompPolicy, snapshotCompatibilityKey, type QemuMachine } from './command-line.ts';
import { capLogFile, ConsoleStageWatcher, errorLines, readLog, readTail } from './console-log.ts';
import { createOverlay } from './disk.ts';
import { runProgram } from './exec-file.ts';
import { balloonTargetMb, resizeGuestMemory } from './memory.ts';
import { loadDeviceState, saveDeviceState } from './migration.ts';
import { installNetworkGuard } from './network-guard.ts';
import { childExited, findProcesses, identify, isSameProcess, killAndWait, spawnQemu, type ProcessIdentity } from './process.ts';
import { QmpClient } from './qmp-client.ts';
import { createTransferArea, isTransferArea, removeTransferArea } from './transfer-area.ts';
import { assertValidVmId, createRunDir, readStateFile, RUN_FILES, runPaths, writeStateFile, type RunPaths, type VmStateFile } from './run-dir.ts';
import { readSnapshotManifest, removeIncompleteSnapshot, sealSnapshot, snapshotInfo, snapshotPaths, type SnapshotManifest } from './snapshot-files.ts';
import { DEFAULT_VM_USER, ensureVmUser, type SystemUser } from './vm-user.ts';

/** Options of {@link QemuDriver}; the caller fills them from its configuration (the driver reads no env). */
export interface QemuDriverOptions<C = void> {
  /** `auto` boots the kernel under KVM once per process and falls back to TCG when that fails. */
  accelerator: AcceleratorRequest;
  /** How to tell that a guest's agent is up; what it produces comes back with the VM (`StartedVm.agent`). */
  agentProbe: AgentProbe<C>;
  qemuBinary?: string;
  qemuImgBinary?: string;
  /**
   * The unprivileged user QEMU drops to (`-runas`), created if missing. Default `sandboxd-vm` when the
   * server runs as root; null runs QEMU as the server's user (no network guard then).
   */
  vmUser?: string | null;
  /** Per-VM cgroups (default on). */
  resourceLimits?: {
    enabled?: boolean;
    /** See `DetectCgroupsOptions.parent`. */
    cgroupParent?: string;
    /** QEMU's own memory on top of the guest's: device emulation, and under TCG the translated code. */
    memoryOverheadMb?: number;
    pidsMax?: number;
  };
  /** The nftables guard against guests reaching the host (default on when QEMU runs as `vmUser`). */
  networkGuard?: {
    enabled?: boolean;
    dnsServers?: string[];
    blockedIpv4?: string[];
    blockedIpv6?: string[];
  };
  /** QEMU's seccomp filter (default on). */
  seccomp?: boolean;
  /** Cap of each console log; a guest printing endlessly must not fill the disk. Default 4 MiB. */
  consoleLogMaxBytes?: number;
  /** Budget of the KVM self-test boot. */
  kvmTestTimeoutMs?: number;
  /** Default deadline of `boot` (default 180 s under TCG, 30 s under KVM). */
  bootTimeoutMs?: number;
  /** Default deadline of `restore` (default 60 s under TCG, 15 s under KVM). */
  restoreTimeoutMs?: number;
}

/**
 * QEMU's memory besides guest RAM, MiB: under TCG mostly the translation cache (capped at 256 MiB by the
 * command line); an idle restored VM measured 74 MiB of private memory in all.
 */
const DEFAULT_OVERHEAD_MB: Record<Accelerator, number> = { tcg: 384, kvm: 128 };
/** Threads: one per vCPU, the main loop, RCU, and a block I/O pool of up to 64. */
const DEFAULT_PIDS_MAX = 256;
const DEFAULT_CONSOLE_LOG_MAX_BYTES = 4 * 1024 * 1024;
const LOG_CAP_INTERVAL_MS = 5000;
/** How often an adopted VM (not our child) is checked for having exited. */
const ADOPTED_POLL_MS = 1000;

/** How a VM ended (internal). */
interface ExitRecord {
  exitCode: number | null;
  signal: string | null;
}

/** A VM this driver runs or adopted. */
interface LiveVm {
  info: VmInfo;
  paths: RunPaths;
  identity: ProcessIdentity;
  marker: string;
  child: ChildProcess | null;
  qmp: QmpClient | null;
  cgroupPaths: string[];
  snapshotDir: string | null;
  machine: QemuMachine;
  /** Set by kill: the exit is expected. */
  killing: boolean;
  /** Set by saveSnapshot: the VM's end is the snapshot's completion, not an exit to report. */
  consumed: boolean;
  /** False until boot/restore succeeded: a VM that never came up is reported by the thrown error only. */
  reportExit: boolean;
  shutdownReason: string | null;
  /** Resolves with the process' end. */
  exited: Promise<ExitRecord>;
  /** Resolves once the VM's files and limits are gone. */
  finished: Promise<void>;
  /** Resolves when boot/restore is done with the run directory (its failure path reads the logs). */
  startSettled: Promise<void>;
}

interface Prepared {
  report: HostReport;
  qemuVersion: string;
  vmUser: SystemUser | null;
  cgroups: CgroupManager | null;
}

/** The VM driver for QEMU (`qemu-system-x86_64`, microvm). */
export class QemuDriver<C = void> implements VmDriver<C> {
  readonly events = new EventEmitter<VmDriverEvents>();
  private readonly live = new Map<string, LiveVm>();
  private prepared: Promise<Prepared> | undefined;
  private readonly qemuBinary: string;
  private readonly qemuImgBinary: string;
  private logCapTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: QemuDriverOptions<C>) {
    this.qemuBinary = options.qemuBinary ?? 'qemu-system-x86_64';
    this.qemuImgBinary = options.qemuImgBinary ?? 'qemu-img';
  }

  /** Checks the host once: QEMU, accelerator self-test, VM user, cgroups, network guard. */
  prepare(image: GuestImageFiles): Promise<HostReport> {
    this.prepared ??= this.doPrepare(image).catch((error: unknown) => {
      this.prepared = undefined; // let a later call retry after the operator fixed the host
      throw error;
    });
    return this.prepared.then((prepared) => prepared.report);
  }

  private async doPrepare(image: GuestImageFiles): Promise<Prepared> {
    let qemuVersion: string;
    try {
      const { stdout } = await runProgram(this.qemuBinary, ['--version']);
      qemuVersion = /version (\S+)/.exec(stdout)?.[1] ?? stdout.split('\n')[0]!.trim();
    } catch (error) {
      throw new VmError('VM_HOST_UNSUPPORTED', `cannot run ${this.qemuBinary}: ${(error as Error).message}`, { cause: error });
    }
    let verdict;
    try {
      verdict = await resolveAccelerator({ request: this.options.accelerator, qemuBinary: this.qemuBinary, image, timeoutMs: this.options.kvmTestTimeoutMs });
    } catch (error) {
      throw new VmError('VM_HOST_UNSUPPORTED', (error as Error).message, { cause: error });
    }
    if (verdict.fallbackReason) this.warn('ACCELERATOR_FALLBACK', verdict.fallbackReason);

    const isRoot = process.getuid?.() === 0;
    const userName = this.options.vmUser === undefined ? (isRoot ? DEFAULT_VM_USER : null) : this.options.vmUser;
    let vmUser: SystemUser | null = null;
    let sandboxDetail: string;
    if (userName && !isRoot) sandboxDetail = `QEMU runs as the server's user: switching to ${userName} needs root`;
    else if (userName) {
      vmUser = await ensureVmUser(userName);
      sandboxDetail = `QEMU drops to user ${vmUser.name} (uid ${vmUser.uid})`;
    } else sandboxDetail = "QEMU runs as the server's user";
    const seccomp = this.options.seccomp !== false;
    sandboxDetail += seccomp ? `; seccomp ${seccompPolicy(vmUser !== null)}` : '; no seccomp filter';
    const processSandbox = { active: vmUser !== null && seccomp, detail: sandboxDetail };
    if (!processSandbox.active) this.warn('PROCESS_SANDBOX_INCOMPLETE', sandboxDetail);

    let cgroups: CgroupManager | null = null;
    let resourceLimits: HostReport['resourceLimits'];
    if (this.options.resourceLimits?.enabled === false) resourceLimits = { active: false, detail: 'disabled by configuration' };
    else if (!isRoot) resourceLimits = { active: false, detail: 'per-VM cgroups need root' };
    else {
      const detection = await detectCgroups({ parent: this.options.resourceLimits?.cgroupParent });
      cgroups = detection.manager;
      resourceLimits = cgroups ? { active: true, detail: cgroups.detail } : { active: false, detail: detection.reason! };
    }
    if (!resourceLimits.active) this.warn('RESOURCE_LIMITS_UNAVAILABLE', `VMs run without CPU/memory limits: ${resourceLimits.detail}`);

    let networkGuard: HostReport['networkGuard'];
    if (this.options.networkGuard?.enabled === false) networkGuard = { active: false, detail: 'disabled by configuration' };
    else if (!vmUser) networkGuard = { active: false, detail: 'needs QEMU to run as its own user (vmUser)' };
    else networkGuard = await installNetworkGuard({ uid: vmUser.uid, ...this.options.networkGuard });
    if (!networkGuard.active) this.warn('NETWORK_GUARD_INACTIVE', `guests with user networking can reach the host's loopback: ${networkGuard.detail}`);

    return {
      qemuVersion,
      vmUser,
      cgroups,
      report: {
        accelerator: verdict.accelerator,
        acceleratorFallbackReason: verdict.fallbackReason,
        resourceLimits,
        networkGuard,
        processSandbox,
        snapshotKey: snapshotCompatibilityKey(verdict.accelerator, qemuVersion),
      },
    };
  }

  list(): VmInfo[] {
    return [...this.live.values()].filter((vm) => !vm.consumed).map((vm) => ({ ...vm.info }));
  }

  get(vmId: string): VmInfo | undefined {
    const vm = this.live.get(vmId);
    return vm && !vm.consumed ? { ...vm.info } : undefined;
  }

  async boot(request: BootVmRequest): Promise<StartedVm<C>> {
    assertValidVmId(request.vmId);
    assertVcpuCount(request.vcpuCount);
    assertMemory(request.memoryMb);
    if (request.snapshotDir && request.network !== 'none') {
      // slirp's state would be saved with the snapshot, and restores without user networking could not load it.
      throw new VmError('VM_INVALID_REQUEST', "a snapshot source boots with network 'none'; its restores choose their own network");
    }
    const prepared = await this.ensurePrepared(request.image);
    const accelerator = prepared.report.accelerator;
    const timeoutMs = request.timeoutMs ?? this.options.bootTimeoutMs ?? (accelerator === 'kvm' ? 30_000 : 180_000);
    const machine: QemuMachine = {
      accelerator,
      vcpuCount: request.vcpuCount,
      memoryMb: request.memoryMb,
      kernelPath: request.image.kernelPath,
      initrdPath: request.image.initrdPath,
      kernelArgs: kernelCommandLine(accelerator, request.vmId, request.image.kernelArgs),
    };
    let overlayPath: string | undefined;
    let memoryFile: { path: string; shared: boolean } | undefined;
    if (request.snapshotDir) {
      await mkdir(request.snapshotDir, { recursive: true, mode: 0o755 });
      if (await readSnapshotManifest(request.snapshotDir)) throw new VmError('VM_INVALID_REQUEST', `${request.snapshotDir} already holds a snapshot`);
      await removeIncompleteSnapshot(request.snapshotDir);
      await this.warnIfTmpfs(request.snapshotDir, request.vmId);
      const files = snapshotPaths(request.snapshotDir);
      overlayPath = files.overlayPath;
      memoryFile = { path: files.memoryPath, shared: true };
    }
    return this.start({
      vmId: request.vmId,
      runDir: request.runDir,
      machine,
      network: request.network,
      origin: 'boot',
      memoryMb: request.memoryMb,
      snapshotDir: request.snapshotDir ?? null,
      overlay: { path: overlayPath, backingPath: request.image.rootfsPath, backingFormat: request.image.rootfsFormat ?? 'raw' },
      memoryFile,
      timeoutMs,
      signal: request.signal,
      prepared,
    });
  }

  async restore(request: RestoreVmRequest): Promise<StartedVm<C>> {
    assertValidVmId(request.vmId);
    const manifest = await readSnapshotManifest(request.snapshotDir);
    if (!manifest) throw new VmError('VM_INVALID_REQUEST', `no complete snapshot in ${request.snapshotDir}`);
    const prepared = await this.ensurePrepared({ kernelPath: manifest.machine.kernelPath, initrdPath: manifest.machine.initrdPath, rootfsPath: '' });
    const { machine } = manifest;
    if (machine.accelerator !== prepared.report.accelerator) {
      throw new VmError('VM_INVALID_REQUEST', `snapshot ${request.snapshotDir} was saved under ${machine.accelerator}, this host runs ${prepared.report.accelerator}: make a new snapshot`);
    }
    if (manifest.qemuVersion !== prepared.qemuVersion) {
      throw new VmError('VM_INVALID_REQUEST', `snapshot ${request.snapshotDir} was saved by QEMU ${manifest.qemuVersion}, this is ${prepared.qemuVersion}: make a new snapshot`);
    }
    if (!Number.isInteger(request.memoryMb) || request.memoryMb < manifest.minMemoryMb || request.memoryMb > machine.memoryMb) {
      throw new VmError('VM_INVALID_REQUEST', `snapshot ${request.snapshotDir} serves ${manifest.minMemoryMb} to ${machine.memoryMb} MiB, not ${request.memoryMb}`);
    }
    const accelerator = machine.accelerator;
    const timeoutMs = request.timeoutMs ?? this.options.restoreTimeoutMs ?? (accelerator === 'kvm' ? 15_000 : 60_000);
    const files = snapshotPaths(request.snapshotDir);
    return this.start({
      vmId: request.vmId,
      runDir: request.runDir,
      machine,
      network: request.network,
      origin: 'restore',
      memoryMb: request.memoryMb,
      snapshotDir: null,
      overlay: { path: undefined, backingPath: files.overlayPath, backingFormat: 'qcow2' },
      memoryFile: { path: files.memoryPath, shared: false },
      incomingStatePath: files.statePath,
      timeoutMs,
      signal: request.signal,
      prepared,
    });
  }

  async saveSnapshot(request: SaveSnapshotRequest): Promise<SnapshotInfo> {
    const vm = this.live.get(request.vmId);
    if (!vm || vm.consumed) throw new VmError('VM_NOT_FOUND', `no live VM ${request.vmId}`);
    if (!vm.info.snapshotCapable || !vm.snapshotDir || !vm.qmp) {
      throw new VmError('VM_BAD_STATE', `VM ${request.vmId} was not booted for a snapshot by this driver (boot it with snapshotDir)`);
    }
    const minMemoryMb = request.minMemoryMb ?? vm.machine.memoryMb;
    if (!Number.isInteger(minMemoryMb) || minMemoryMb < MIN_MEMORY_MB || minMemoryMb > vm.machine.memoryMb) {
      throw new VmError('VM_INVALID_REQUEST', `minMemoryMb must be from ${MIN_MEMORY_MB} to ${vm.machine.memoryMb}, got ${minMemoryMb}`);
    }
    const prepared = await this.prepared!;
    const timeoutMs = request.timeoutMs ?? 600_000;
    const deadline = Date.now() + timeoutMs;
    const snapshotDir = vm.snapshotDir;
    vm.consumed = true; // from here on its end is the snapshot's business, not an exit to report
    try {
      if (minMemoryMb < vm.machine.memoryMb) await resizeGuestMemory(vm.qmp, minMemoryMb, deadline - Date.now());
      const files = snapshotPaths(snapshotDir);
      const stateBytes = await saveDeviceState(vm.qmp, {
        socketPath: vm.paths.migrationSocketPath,
        statePath: files.statePath,
        owner: prepared.vmUser,
        timeoutMs: Math.max(1000, deadline - Date.now()),
      });
      await vm.qmp.execute('quit').catch(() => undefined); // the answer may race QEMU's exit
      await Promise.race([vm.exited, sleep(5000)]);
      if (vm.child && vm.child.exitCode === null) vm.child.kill('SIGKILL');
      await vm.finished;
      const manifest: SnapshotManifest = { version: 1, machine: vm.machine, qemuVersion: prepared.qemuVersion, minMemoryMb, savedAtMs: Date.now(), stateBytes };
      await sealSnapshot(snapshotDir, manifest);
      return snapshotInfo(snapshotDir, manifest);
    } catch (error) {
      vm.killing = true;
      vm.child?.kill('SIGKILL');
      await vm.finished;
      await removeIncompleteSnapshot(snapshotDir);
      throw new VmError('VM_OPERATION_FAILED', `saving a snapshot of ${request.vmId} failed: ${(error as Error).message}`, { cause: error });
    }
  }

  async readSnapshot(dir: string): Promise<SnapshotInfo | undefined> {
    const manifest = await readSnapshotManifest(dir);
    return manifest ? snapshotInfo(dir, manifest) : undefined;
  }

  async kill(vmId: string): Promise<void> {
    const vm = this.live.get(vmId);
    if (!vm) return;
    vm.killing = true;
    if (vm.child) {
      if (vm.child.exitCode === null && vm.child.signalCode === null) vm.child.kill('SIGKILL');
    } else await killAndWait(vm.identity, vm.marker);
    await vm.finished;
  }

  async killAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((vmId) => this.kill(vmId)));
  }

  async recover(request: RecoverRequest): Promise<RecoveryReport> {
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
      if ([...this.live.values()].some((vm) => vm.paths.runDir === runDir)) continue;
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
          const adopted = await this.adopt(state, paths, identity).catch(() => undefined);
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

  // --- internals -------------------------------------------------------------------------------------

  private async ensurePrepared(image: GuestImageFiles): Promise<Prepared> {
    await this.prepare(image);
    return this.prepared!;
  }

  private warn(code: string, message: string, vmId?: string): void {
    this.events.emit('warning', { code, message, ...(vmId ? { vmId } : {}) });
  }

  private async warnIfTmpfs(dir: string, vmId: string): Promise<void> {
    const TMPFS_MAGIC = 0x01021994;
    const stats = await statfs(dir).catch(() => undefined);
    if (stats?.type === TMPFS_MAGIC) {
      this.warn('SNAPSHOT_ON_TMPFS', `snapshot directory ${dir} is on tmpfs: every page a clone touches first is added to the shared RAM file for good; use a disk filesystem`, vmId);
    }
  }

  /** Spawns QEMU for a boot or a restore and waits until the guest is up (or fails with its stage). */
  private async start(params: {
    vmId: string;
    runDir: string;
    machine: QemuMachine;
    network: NetworkMode;
    origin: 'boot' | 'restore';
    memoryMb: number;
    snapshotDir: string | null;
    overlay: { path: string | undefined; backingPath: string; backingFormat: 'raw' | 'qcow2' };
    memoryFile: { path: string; shared: boolean } | undefined;
    incomingStatePath?: string;
    timeoutMs: number;
    signal: AbortSignal | undefined;
    prepared: Prepared;
  }): Promise<StartedVm<C>> {
    const { vmId, machine, prepared } = params;
    if (this.live.has(vmId)) throw new VmError('VM_INVALID_REQUEST', `VM ${vmId} already exists`);
    const paths = runPaths(params.runDir);
    const deadline = Date.now() + params.timeoutMs;
    const marker = vmMarker(vmId);
    const vmUser = prepared.vmUser;
    const overlayPath = params.overlay.path ?? paths.overlayPath;
    // The target a restore's balloon deflates to; a cold boot gives the guest all of -m.
    const guestMemoryMb = params.origin === 'restore' ? balloonTargetMb(machine.memoryMb, params.memoryMb) : machine.memoryMb;

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
    };
    let child: ChildProcess | undefined;
    try {
      if (prepared.cgroups) {
        const overheadMb = this.options.resourceLimits?.memoryOverheadMb ?? DEFAULT_OVERHEAD_MB[machine.accelerator];
        cgroupPaths = await prepared.cgroups.create(vmId, {
          vcpuCount: machine.vcpuCount,
          memoryMaxBytes: (guestMemoryMb + overheadMb) * 1024 * 1024,
          pidsMax: this.options.resourceLimits?.pidsMax ?? DEFAULT_PIDS_MAX,
        });
        pendingState.cgroupPaths = cgroupPaths;
      }
      await writeStateFile(paths.statePath, pendingState);
      // After the state file: a server that dies from here on leaves a VM the reaper cleans up whole.
      transferWritable = await createTransferArea(paths.transferDir, vmUser);
      await createOverlay({ qemuImgBinary: this.qemuImgBinary, overlayPath, backingPath: params.overlay.backingPath, backingFormat: params.overlay.backingFormat, owner: vmUser });
      const argv = buildQemuArgv(machine, {
        vmId,
        qmpSocketPath: paths.qmpSocketPath,
        agentSocketPath: paths.agentSocketPath,
        consoleLogPath: paths.consoleLogPath,
        overlayPath,
        memoryFile: params.memoryFile,
        network: params.network,
        transfer: { dir: paths.transferDir, writable: transferWritable },
        incoming: params.incomingStatePath !== undefined,
        startPaused: true,
        runAsUser: vmUser?.name ?? null,
        seccomp: this.options.seccomp === false ? null : seccompPolicy(vmUser !== null),
      });
      const stateFd = params.incomingStatePath ? openSync(params.incomingStatePath, 'r') : undefined;
      try {
        child = spawnQemu({ binary: this.qemuBinary, argv, logPath: paths.qemuLogPath, extraFds: stateFd === undefined ? [] : [stateFd] });
      } finally {
        if (stateFd !== undefined) closeSync(stateFd);
      }
    } catch (error) {
      await cleanupVmFiles(paths.runDir, cgroupPaths, params.snapshotDir);
      throw error instanceof VmError ? error : new VmBootError(vmId, 'spawn', (error as Error).message, '', { cause: error });
    }

    const exited = childExited(child);
    let settleStart = () => undefined as void;
    const startSettled = new Promise<void>((resolve) => (settleStart = resolve));
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
      },
      paths,
      identity: { pid: child.pid ?? 0, startTimeTicks: 0, bootId: '' },
      marker,
      child,
      qmp: null,
      cgroupPaths,
      snapshotDir: params.snapshotDir,
      machine,
      killing: false,
      consumed: false,
      reportExit: false,
      shutdownReason: null,
      exited,
      finished: Promise.resolve(),
      startSettled,
    };
    this.register(vm);

    const emitStage = (stage: VmStage) => this.events.emit('stage', { vmId, stage, elapsedMs: Date.now() - startedAtMs });
    const watcher = new ConsoleStageWatcher(paths.consoleLogPath, emitStage);
    const abort = new AbortController();
    const onCallerAbort = () => abort.abort(new Error('cancelled by the caller'));
    params.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const timer = setTimeout(() => abort.abort(new Error(`not up within ${params.timeoutMs} ms`)), Math.max(0, deadline - Date.now()));
    let stage: VmStage = 'spawn';
    const { agentProbe } = this.options;
    // The probe's handshake; if the start fails after all, what it produced is released (also when it
    // completes only after the failure).
    let probe: Promise<C> | undefined;
    const startProbe = (): Promise<C> =>
      (probe = agentProbe.waitUntilReady(paths.agentSocketPath, { vmId, signal: abort.signal, transferDir: transferWritable ? paths.transferDir : null }));
    try {
      const run = async (): Promise<C> => {
        const identity = child.pid ? await identify(child.pid) : undefined;
        if (!identity) throw new Error('QEMU exited at once');
        vm.identity = identity;
        if (prepared.cgroups) await prepared.cgroups.addProcess(cgroupPaths, identity.pid);
        await writeStateFile(paths.statePath, { ...pendingState, pid: identity.pid, startTimeTicks: identity.startTimeTicks, bootId: identity.bootId });
        const qmp = await QmpClient.connect(paths.qmpSocketPath, { timeoutMs: Math.max(1, deadline - Date.now()), signal: abort.signal });
        vm.qmp = qmp;
        qmp.on('event', (event) => {
          if (event.event === 'SHUTDOWN') vm.shutdownReason = String(event.data.reason ?? 'shutdown');
        });
        emitStage('spawn');
        if (params.incomingStatePath) {
          stage = 'restore';
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
          await qmp.execute('cont');
          emitStage('restore');
          // The NIC was saved without a backend (link down); tell the guest the link is up now.
          if (params.network === 'user') await qmp.execute('set_link', { name: 'nic0', up: true });
          stage = 'agent';
          // Always set the balloon: the snapshot may have been saved with part of its RAM in it.
          const memoryDone = resizeGuestMemory(qmp, guestMemoryMb, Math.max(1, deadline - Date.now())).then(
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
        exited.then((exit) => {
          throw new Error(`QEMU exited (${exit.signal ?? `code ${exit.exitCode}`})${vm.shutdownReason ? `: ${describeShutdown(vm.shutdownReason)}` : ''}`);
        }),
        new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(abort.signal.reason as Error), { once: true })),
      ]);
      vm.info.pid = vm.identity.pid;
      vm.reportExit = true;
      return { ...vm.info, agent };
    } catch (error) {
      void probe?.then((connection) => agentProbe.release(connection)).catch(() => undefined);
      abort.abort(error);
      let failedStage: VmStage = (error as { vmStage?: VmStage }).vmStage ?? stage;
      if (failedStage === 'kernel') failedStage = await watcher.currentStage();
      const reasons = [(error as Error).message];
      // A QMP or agent error is often only the symptom of QEMU dying; say so first when it did.
      const exit = await Promise.race([exited, sleep(200).then(() => undefined)]);
      if (exit && !reasons[0]!.startsWith('QEMU exited')) reasons.unshift(`QEMU exited (${exit.signal ?? `code ${exit.exitCode}`})`);
      const consoleText = await readLog(paths.consoleLogPath);
      reasons.push(...errorLines(consoleText).slice(-3));
      const tail = await this.diagnosticTail(paths);
      settleStart();
      vm.killing = true;
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

  /** Re-adopts a VM left by an earlier server process. */
  private async adopt(state: VmStateFile, paths: RunPaths, identity: ProcessIdentity): Promise<VmInfo> {
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
      },
      paths,
      identity,
      marker,
      child: null,
      qmp,
      cgroupPaths: state.cgroupPaths,
      snapshotDir: state.snapshotDir,
      machine: { accelerator: state.accelerator, vcpuCount: state.vcpuCount, memoryMb: state.memoryMb, kernelPath: '', initrdPath: '', kernelArgs: [] },
      killing: false,
      consumed: false,
      reportExit: true,
      shutdownReason: null,
      exited,
      finished: Promise.resolve(),
      startSettled: Promise.resolve(),
    };
    qmp.on('event', (event) => {
      if (event.event === 'SHUTDOWN') vm.shutdownReason = String(event.data.reason ?? 'shutdown');
    });
    this.register(vm);
    return { ...vm.info };
  }

  /** Tracks a VM from now until its process ended and its files are gone. */
  private register(vm: LiveVm): void {
    vm.finished = this.superviseExit(vm);
    this.live.set(vm.info.vmId, vm);
    this.logCapTimer ??= setInterval(() => void this.capLogs(), LOG_CAP_INTERVAL_MS).unref();
  }

  /** Waits for the VM's process to end, then removes what it left and reports the exit. */
  private async superviseExit(vm: LiveVm): Promise<void> {
    const exit = await vm.exited;
    await vm.startSettled; // a failing start reads the logs before they go
    const tail = vm.consumed || !vm.reportExit ? '' : await this.diagnosticTail(vm.paths);
    vm.qmp?.close();
    // A consumed VM's snapshot files are the snapshot; any other snapshot source's are an incomplete one.
    await cleanupVmFiles(vm.paths.runDir, vm.cgroupPaths, vm.consumed ? null : vm.snapshotDir).catch((error: Error) =>
      this.warn('CLEANUP_FAILED', `cleaning up after VM ${vm.info.vmId}: ${error.message}`, vm.info.vmId),
    );
    this.live.delete(vm.info.vmId);
    if (vm.consumed || !vm.reportExit) return;
    this.events.emit('exit', {
      vmId: vm.info.vmId,
      pid: vm.identity.pid,
      expected: vm.killing,
      exitCode: exit.exitCode,
      signal: exit.signal,
      reason: vm.shutdownReason,
      consoleTail: tail,
    });
  }

  private async diagnosticTail(paths: RunPaths): Promise<string> {
    const [consoleTail, qemuTail] = await Promise.all([readTail(paths.consoleLogPath, 30), readTail(paths.qemuLogPath, 10)]);
    return [consoleTail && `[console]\n${consoleTail}`, qemuTail && `[qemu]\n${qemuTail}`].filter(Boolean).join('\n');
  }

  private async capLogs(): Promise<void> {
    const maxBytes = this.options.consoleLogMaxBytes ?? DEFAULT_CONSOLE_LOG_MAX_BYTES;
    for (const vm of this.live.values()) {
      for (const path of [vm.paths.consoleLogPath, vm.paths.qemuLogPath]) {
        if (await capLogFile(path, maxBytes).catch(() => false)) this.warn('CONSOLE_LOG_CUT', `${path} exceeded ${maxBytes} bytes and was cut`, vm.info.vmId);
      }
    }
  }
}

/** QMP SHUTDOWN reasons in words (with -no-reboot and panic=-1 a guest panic arrives as a reset). */
function describeShutdown(reason: string): string {
  const words: Record<string, string> = {
    'guest-reset': 'the guest rebooted (with panic=-1 that is usually a kernel panic, or PID 1 exiting)',
    'guest-shutdown': 'the guest powered off',
    'guest-panic': 'the guest kernel panicked',
    'host-signal': 'QEMU was signalled',
    'host-qmp-quit': 'QEMU was told to quit',
  };
  return `${reason}, ${words[reason] ?? 'see the console tail'}`;
}

/** The string in a VM's QEMU argv (`-name sandboxd.<id>,…`) that identifies it in /proc. */
function vmMarker(vmId: string): string {
  return `sandboxd.${vmId}`;
}

function assertVcpuCount(vcpuCount: number): void {
  if (!(VCPU_COUNTS as readonly number[]).includes(vcpuCount)) throw new VmError('VM_INVALID_REQUEST', `vcpuCount must be one of ${VCPU_COUNTS.join(', ')}, got ${vcpuCount}`);
}

function assertMemory(memoryMb: number): void {
  if (!Number.isInteger(memoryMb) || memoryMb < MIN_MEMORY_MB || memoryMb > MAX_MEMORY_MB) {
    throw new VmError('VM_INVALID_REQUEST', `memoryMb must be an integer from ${MIN_MEMORY_MB} to ${MAX_MEMORY_MB}, got ${memoryMb}`);
  }
}

/** True when a directory holds nothing but files a run directory may have (safe to remove as ours). */
async function onlyRunFiles(dir: string): Promise<boolean> {
  const known = new Set<string>(Object.values(RUN_FILES));
  try {
    return (await readdir(dir)).every((name) => known.has(name) || name.endsWith('.tmp'));
  } catch {
    return false;
  }
}

/** Removes a dead VM's run directory (sockets, overlay, logs, state), its cgroups and an incomplete snapshot. */
async function cleanupVmFiles(runDir: string, cgroupPaths: string[], snapshotDir: string | null): Promise<void> {
  await removeCgroups(cgroupPaths);
  await removeTransferArea(join(runDir, RUN_FILES.transfer));
  if (snapshotDir) await removeIncompleteSnapshot(snapshotDir);
  await rm(runDir, { recursive: true, force: true });
}
