/**
 * The QEMU implementation of the VmDriver: microvm machines, one QEMU process per VM, started by argv as an
 * unprivileged user under seccomp, in its own cgroup, with a QMP client for control and the guest agent on a
 * virtio-serial port. This class is the driver's surface: it checks requests and hands them to the steps,
 * each in a file of its own: host preparation (`host-preparation.ts`), the start sequence of boots and
 * restores (`start-sequence.ts`), recovery after a server crash (`recovery.ts`), and supervision and clean-up
 * (`supervision.ts`). A VM's life is one state field (`live-vm.ts`). The choices and measurements are in
 * `../README.md`.
 */
import { EventEmitter } from 'node:events';
import { mkdir, statfs } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  MAX_MEMORY_MB,
  MIN_MEMORY_MB,
  VCPU_COUNTS,
  type BootVmRequest,
  type CaptureResult,
  type CaptureSnapshotRequest,
  type GuestImageFiles,
  type HostReport,
  type NetworkMode,
  type RecoverRequest,
  type RecoveryReport,
  type RestoreVmRequest,
  type SaveSnapshotRequest,
  type SnapshotDependencies,
  type SnapshotExport,
  type SnapshotInfo,
  type StartedVm,
  type VmDriver,
  type VmDriverEvents,
  type VmInfo,
  type VolumeAttachment,
} from '../vm-driver.ts';
import { VmError } from '../vm-errors.ts';
import { captureVm } from './capture.ts';
import { attachToRunningVm, checkVolumes } from './volume-slots.ts';
import { kernelCommandLine, type QemuMachine } from './command-line.ts';
import { growRootDisk } from './disk.ts';
import type { DriverContext, PreparedHost, QemuDriverOptions } from './driver-context.ts';
import { prepareHost } from './host-preparation.ts';
import { transition, type LiveVm } from './live-vm.ts';
import { resizeGuestMemory } from './memory.ts';
import { saveDeviceState } from './migration.ts';
import { killAndWait } from './process.ts';
import { recoverRunRoot } from './recovery.ts';
import { assertValidVmId } from './run-dir.ts';
import { readSnapshotManifest, removeIncompleteSnapshot, sealSnapshot, snapshotInfo, snapshotPaths, type SnapshotManifest } from './snapshot-files.ts';
import { exportSnapshot, importSnapshot, rebaseDiskLayer } from './snapshot-transport.ts';
import { startVm } from './start-sequence.ts';
import { capLogs, superviseExit } from './supervision.ts';

export type { QemuDriverOptions } from './driver-context.ts';

const LOG_CAP_INTERVAL_MS = 5000;

/** The VM driver for QEMU (`qemu-system-x86_64`, microvm). */
export class QemuDriver<C = void> implements VmDriver<C> {
  readonly events = new EventEmitter<VmDriverEvents>();
  private readonly live = new Map<string, LiveVm>();
  private readonly ctx: DriverContext<C>;
  private prepared: Promise<PreparedHost> | undefined;
  private logCapTimer: NodeJS.Timeout | undefined;

  constructor(options: QemuDriverOptions<C>) {
    this.ctx = {
      options,
      qemuBinary: options.qemuBinary ?? 'qemu-system-x86_64',
      qemuImgBinary: options.qemuImgBinary ?? 'qemu-img',
      events: this.events,
      live: this.live,
      register: (vm) => this.register(vm),
      warn: (code, message, vmId) => this.events.emit('warning', { code, message, ...(vmId ? { vmId } : {}) }),
    };
  }

  /** Checks the host once: QEMU, accelerator self-test, VM user, cgroups, network guard. */
  prepare(image: GuestImageFiles): Promise<HostReport> {
    this.prepared ??= prepareHost(this.ctx, image).catch((error: unknown) => {
      this.prepared = undefined; // let a later call retry after the operator fixed the host
      throw error;
    });
    return this.prepared.then((prepared) => prepared.report);
  }

  list(): VmInfo[] {
    return [...this.live.values()].filter((vm) => vm.state !== 'consumed').map((vm) => ({ ...vm.info }));
  }

  get(vmId: string): VmInfo | undefined {
    const vm = this.live.get(vmId);
    return vm && vm.state !== 'consumed' ? { ...vm.info } : undefined;
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
    await this.assertGuarded(request.network, prepared);
    const accelerator = prepared.report.accelerator;
    const timeoutMs = request.timeoutMs ?? this.ctx.options.bootTimeoutMs ?? (accelerator === 'kvm' ? 30_000 : 180_000);
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
    return startVm(this.ctx, {
      vmId: request.vmId,
      runDir: request.runDir,
      machine,
      network: request.network,
      origin: 'boot',
      memoryMb: request.memoryMb,
      snapshotDir: request.snapshotDir ?? null,
      disk: {
        kind: 'overlay',
        ...(overlayPath ? { path: overlayPath } : {}),
        backingPath: request.image.rootfsPath,
        backingFormat: request.image.rootfsFormat ?? 'raw',
      },
      // Snapshot sources and boots have placeholders in every slot: their restores choose the volumes.
      volumes: [],
      memoryFile,
      timeoutMs,
      signal: request.signal,
      prepared,
    });
  }

  exportSnapshot(dir: string): Promise<SnapshotExport | undefined> {
    return exportSnapshot(this.ctx.qemuImgBinary, dir);
  }

  importSnapshot(dir: string, manifest: unknown, dependencies: SnapshotDependencies): Promise<SnapshotInfo> {
    return importSnapshot(this.ctx.qemuImgBinary, dir, manifest, dependencies);
  }

  rebaseDiskLayer(layerPath: string, backing: { path: string; format: 'raw' | 'qcow2' }): Promise<void> {
    return rebaseDiskLayer(this.ctx.qemuImgBinary, layerPath, backing);
  }

  async restore(request: RestoreVmRequest): Promise<StartedVm<C>> {
    assertValidVmId(request.vmId);
    const manifest = await readSnapshotManifest(request.snapshotDir);
    if (!manifest) throw new VmError('VM_INVALID_REQUEST', `no complete snapshot in ${request.snapshotDir}`);
    const prepared = await this.ensurePrepared({ kernelPath: manifest.machine.kernelPath, initrdPath: manifest.machine.initrdPath, rootfsPath: '' });
    const { machine } = manifest;
    if (machine.accelerator !== prepared.report.accelerator) {
      throw new VmError(
        'VM_INVALID_REQUEST',
        `snapshot ${request.snapshotDir} was saved under ${machine.accelerator}, this host runs ${prepared.report.accelerator}: make a new snapshot`,
      );
    }
    if (manifest.qemuVersion !== prepared.qemuVersion) {
      throw new VmError(
        'VM_INVALID_REQUEST',
        `snapshot ${request.snapshotDir} was saved by QEMU ${manifest.qemuVersion}, this is ${prepared.qemuVersion}: make a new snapshot`,
      );
    }
    if (!Number.isInteger(request.memoryMb) || request.memoryMb < manifest.minMemoryMb || request.memoryMb > machine.memoryMb) {
      throw new VmError(
        'VM_INVALID_REQUEST',
        `snapshot ${request.snapshotDir} serves ${manifest.minMemoryMb} to ${machine.memoryMb} MiB, not ${request.memoryMb}`,
      );
    }
    if (manifest.network && manifest.network !== request.network) {
      throw new VmError(
        'VM_INVALID_REQUEST',
        `snapshot ${request.snapshotDir} holds the state of a '${manifest.network}' network: restore it with that network, not '${request.network}'`,
      );
    }
    await this.assertGuarded(request.network, prepared);
    const volumes = await checkVolumes(request.volumes ?? [], prepared.vmUser);
    const accelerator = machine.accelerator;
    const timeoutMs = request.timeoutMs ?? this.ctx.options.restoreTimeoutMs ?? (accelerator === 'kvm' ? 15_000 : 60_000);
    const files = snapshotPaths(request.snapshotDir);
    return startVm(this.ctx, {
      vmId: request.vmId,
      runDir: request.runDir,
      machine,
      network: request.network,
      origin: 'restore',
      memoryMb: request.memoryMb,
      snapshotDir: null,
      disk: request.takeDisk ? { kind: 'take', from: files.overlayPath } : { kind: 'overlay', backingPath: files.overlayPath, backingFormat: 'qcow2' },
      volumes,
      memoryFile: { path: files.memoryPath, shared: false },
      incomingStatePath: files.statePath,
      ...(request.beforeRun ? { beforeRun: request.beforeRun } : {}),
      linkDown: request.linkDown === true,
      timeoutMs,
      signal: request.signal,
      prepared,
    });
  }

  async setLink(vmId: string, up: boolean): Promise<void> {
    const vm = this.live.get(vmId);
    if (!vm || vm.state === 'consumed') throw new VmError('VM_NOT_FOUND', `no live VM ${vmId}`);
    if (vm.info.network !== 'user') return;
    if (!vm.qmp) throw new VmError('VM_BAD_STATE', `VM ${vmId} has no QMP connection: its link cannot change`);
    await vm.qmp.execute('set_link', { name: 'nic0', up });
  }

  async saveSnapshot(request: SaveSnapshotRequest): Promise<SnapshotInfo> {
    const vm = this.live.get(request.vmId);
    if (!vm || vm.state === 'consumed') throw new VmError('VM_NOT_FOUND', `no live VM ${request.vmId}`);
    const { machine } = vm;
    if (!vm.info.snapshotCapable || !vm.snapshotDir || !vm.qmp || !machine) {
      throw new VmError('VM_BAD_STATE', `VM ${request.vmId} was not booted for a snapshot by this driver (boot it with snapshotDir)`);
    }
    const minMemoryMb = request.minMemoryMb ?? machine.memoryMb;
    if (!Number.isInteger(minMemoryMb) || minMemoryMb < MIN_MEMORY_MB || minMemoryMb > machine.memoryMb) {
      throw new VmError('VM_INVALID_REQUEST', `minMemoryMb must be from ${MIN_MEMORY_MB} to ${machine.memoryMb}, got ${minMemoryMb}`);
    }
    // From here on its end is the snapshot's business, not an exit to report.
    transition(vm, 'consume');
    const prepared = await this.prepared!;
    const timeoutMs = request.timeoutMs ?? 600_000;
    const deadline = Date.now() + timeoutMs;
    const snapshotDir = vm.snapshotDir;
    try {
      if (minMemoryMb < machine.memoryMb) await resizeGuestMemory(vm.qmp, minMemoryMb, deadline - Date.now());
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
      const manifest: SnapshotManifest = { version: 1, machine, qemuVersion: prepared.qemuVersion, minMemoryMb, savedAtMs: Date.now(), stateBytes };
      await sealSnapshot(snapshotDir, manifest);
      return snapshotInfo(snapshotDir, manifest);
    } catch (error) {
      vm.child?.kill('SIGKILL');
      await vm.finished;
      await removeIncompleteSnapshot(snapshotDir);
      throw new VmError('VM_OPERATION_FAILED', `saving a snapshot of ${request.vmId} failed: ${(error as Error).message}`, { cause: error });
    }
  }

  async captureSnapshot(request: CaptureSnapshotRequest): Promise<CaptureResult> {
    const vm = this.live.get(request.vmId);
    if (!vm || vm.state === 'consumed') throw new VmError('VM_NOT_FOUND', `no live VM ${request.vmId}`);
    const prepared = await this.prepared!;
    const live = this.ctx.options.liveCapture ?? prepared.report.accelerator === 'kvm';
    return captureVm(this.ctx, vm, request, prepared, live);
  }

  async readSnapshot(dir: string): Promise<SnapshotInfo | undefined> {
    const manifest = await readSnapshotManifest(dir);
    return manifest ? snapshotInfo(dir, manifest) : undefined;
  }

  async growDisk(vmId: string, sizeMb: number): Promise<void> {
    const vm = this.live.get(vmId);
    if (!vm || vm.state === 'consumed') throw new VmError('VM_NOT_FOUND', `no live VM ${vmId}`);
    if (vm.state !== 'running' || !vm.qmp) throw new VmError('VM_BAD_STATE', `VM ${vmId} is ${vm.state}: its disk cannot grow now`);
    if (!Number.isInteger(sizeMb) || sizeMb < 1) throw new VmError('VM_INVALID_REQUEST', `sizeMb must be a positive integer, got ${sizeMb}`);
    await growRootDisk(vm.qmp, sizeMb * 1024 * 1024);
  }

  async attachVolumes(vmId: string, volumes: VolumeAttachment[]): Promise<void> {
    const vm = this.live.get(vmId);
    if (!vm || vm.state === 'consumed') throw new VmError('VM_NOT_FOUND', `no live VM ${vmId}`);
    await attachToRunningVm(vm, volumes, this.ctx.qemuImgBinary, (await this.prepared)?.vmUser ?? null);
  }

  async kill(vmId: string): Promise<void> {
    const vm = this.live.get(vmId);
    if (!vm) return;
    transition(vm, 'kill');
    if (vm.child) {
      if (vm.child.exitCode === null && vm.child.signalCode === null) vm.child.kill('SIGKILL');
    } else await killAndWait(vm.identity, vm.marker);
    await vm.finished;
  }

  async killAll(): Promise<void> {
    await Promise.all([...this.live.keys()].map((vmId) => this.kill(vmId)));
  }

  recover(request: RecoverRequest): Promise<RecoveryReport> {
    return recoverRunRoot(this.ctx, request);
  }

  // --- internals -------------------------------------------------------------------------------------

  /**
   * A guest with user networking starts only behind an active network guard (checked now, re-installed if a
   * firewall reload removed it), unless `networkGuard.required` is false.
   */
  private async assertGuarded(network: NetworkMode, prepared: PreparedHost): Promise<void> {
    if (network !== 'user' || this.ctx.options.networkGuard?.required === false) return;
    const status = prepared.guard ? await prepared.guard.check() : prepared.report.networkGuard;
    if (!status.active) {
      throw new VmError(
        'VM_NETWORK_UNGUARDED',
        `VMs with user networking do not start without the host's network guard, which keeps guests off the host's loopback and private networks: ${status.detail}`,
      );
    }
  }

  private async ensurePrepared(image: GuestImageFiles): Promise<PreparedHost> {
    await this.prepare(image);
    return this.prepared!;
  }

  /** Tracks a VM from now until its process ended and its files are gone. */
  private register(vm: LiveVm): void {
    vm.finished = superviseExit(this.ctx, vm);
    this.live.set(vm.info.vmId, vm);
    this.logCapTimer ??= setInterval(() => void capLogs(this.ctx), LOG_CAP_INTERVAL_MS).unref();
  }

  private async warnIfTmpfs(dir: string, vmId: string): Promise<void> {
    const TMPFS_MAGIC = 0x01021994;
    const stats = await statfs(dir).catch(() => undefined);
    if (stats?.type === TMPFS_MAGIC) {
      this.ctx.warn(
        'SNAPSHOT_ON_TMPFS',
        `snapshot directory ${dir} is on tmpfs: every page a clone touches first is added to the shared RAM file for good; use a disk filesystem`,
        vmId,
      );
    }
  }
}

function assertVcpuCount(vcpuCount: number): void {
  if (!(VCPU_COUNTS as readonly number[]).includes(vcpuCount))
    throw new VmError('VM_INVALID_REQUEST', `vcpuCount must be one of ${VCPU_COUNTS.join(', ')}, got ${vcpuCount}`);
}

function assertMemory(memoryMb: number): void {
  if (!Number.isInteger(memoryMb) || memoryMb < MIN_MEMORY_MB || memoryMb > MAX_MEMORY_MB) {
    throw new VmError('VM_INVALID_REQUEST', `memoryMb must be an integer from ${MIN_MEMORY_MB} to ${MAX_MEMORY_MB}, got ${memoryMb}`);
  }
}
