/**
 * The VM driver port: what the engine needs from a hypervisor to run short-lived microVMs. QEMU implements it
 * today (`qemu/qemu-driver.ts`); Firecracker or Cloud Hypervisor can implement it too, because nothing here
 * names a QEMU concept. The driver knows nothing about users, sessions or the store: its caller chooses the
 * VM ids and run directories, persists what it needs and decides what to do with the events.
 */
import type { EventEmitter } from 'node:events';

/** vCPU counts a VM may have; each needs its own snapshot because a snapshot fixes the CPU count. */
export const VCPU_COUNTS = [1, 2, 4, 6, 8] as const;
export type VcpuCount = (typeof VCPU_COUNTS)[number];

/** Smallest and largest guest memory a VM may be given, MiB. */
export const MIN_MEMORY_MB = 128;
export const MAX_MEMORY_MB = 8192;

/**
 * Volume slots every VM has, after its root disk: block devices whose drive is a placeholder (an empty, 0-byte
 * disk) unless a volume is attached there. A restore must have exactly its snapshot's devices, and the machine has no
 * hot-plug, so the slots exist in every snapshot and a restore points a slot at a volume's image instead.
 */
export const VOLUME_SLOT_COUNT = 4;

/** A volume (a raw disk image holding a filesystem) in one of a VM's slots. */
export interface VolumeAttachment {
  /** 0 to `VOLUME_SLOT_COUNT - 1`; the guest finds the slot's device by its serial (`sandboxd-vol<slot>`). */
  slot: number;
  /** Absolute path of the raw image; QEMU opens it by path as its unprivileged user, so that user must own it. */
  imagePath: string;
  /** The image never changes: the guest writes, if it does, to a throw-away layer over it (`volume-slots.ts`). */
  readOnly: boolean;
}

/** Which accelerator runs the guest. */
export type Accelerator = 'kvm' | 'tcg';
/** What the caller asks for: `auto` tries KVM with a real boot and falls back to TCG. */
export type AcceleratorRequest = Accelerator | 'auto';

/**
 * Guest network:
 * - `user`: outbound TCP/UDP through the hypervisor's user-mode stack (no host setup; host addresses blocked
 *   by the network guard).
 * - `none`: a NIC without a backend; the guest has no network at all.
 */
export type NetworkMode = 'user' | 'none';

/** The bootable files of a guest image (see `packages/server/images/README.md`, the boot contract). */
export interface GuestImageFiles {
  /** Uncompressed kernel for direct (PVH) boot. */
  kernelPath: string;
  initrdPath: string;
  /** Root filesystem; never written: each VM gets a copy-on-write overlay. */
  rootfsPath: string;
  /** Format of `rootfsPath`; default `raw`. */
  rootfsFormat?: 'raw' | 'qcow2';
  /** Extra kernel parameters of this image, e.g. `sandboxd.hostname=…`. */
  kernelArgs?: readonly string[];
}

/** Where a VM's files are; all inside its run directory. */
export interface VmPaths {
  /** The caller's per-VM directory; the driver owns its contents and removes it when the VM ends. */
  runDir: string;
  /** Unix socket of the guest agent's channel (connect an `AgentClient` here). */
  agentSocketPath: string;
  /** The guest's serial console; removed with the run directory (the exit event carries its tail). */
  consoleLogPath: string;
  /**
   * The host side of the guest's file-transfer share (give it to `AgentClient.connect`), or null when the VM
   * has none the host may write to: then files travel over the agent channel only.
   */
  transferDir: string | null;
}

/** A live VM as the driver sees it. */
export interface VmInfo extends VmPaths {
  vmId: string;
  /** Host process id of the hypervisor. */
  pid: number;
  accelerator: Accelerator;
  vcpuCount: number;
  /** Guest memory the VM was given, MiB (what the guest sees, whatever the snapshot was booted with). */
  memoryMb: number;
  network: NetworkMode;
  /** How this driver instance got it: booted, restored, or adopted after a server restart. */
  origin: 'boot' | 'restore' | 'adopted';
  /** Wall clock when the hypervisor process started, ms since the epoch. */
  startedAtMs: number;
  /** True when `saveSnapshot` may be called (booted with `snapshotDir` by this driver instance). */
  snapshotCapable: boolean;
  /** The volumes in its slots (empty slots are not listed). */
  volumes: VolumeAttachment[];
  /** The cgroup directories its process runs in (empty without cgroups); the egress firewall matches one of them. */
  cgroupPaths: string[];
}

/** Common options of operations that may take long. */
export interface DeadlineOptions {
  /** The whole operation must finish within this; on expiry the VM is killed and the call rejects. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Cold boot. */
export interface BootVmRequest extends DeadlineOptions {
  /** `[A-Za-z0-9_-]{1,64}`; unique on this host. */
  vmId: string;
  /** Created if missing; must be empty; short enough for unix socket paths (see `qemu/run-dir.ts`). */
  runDir: string;
  image: GuestImageFiles;
  vcpuCount: VcpuCount;
  memoryMb: number;
  network: NetworkMode;
  /**
   * Boot the VM so that it can be saved as a snapshot into this directory (created if missing, must not
   * hold a snapshot yet). Its RAM then lives in a file there. Put it on a disk filesystem, not tmpfs:
   * clones map it copy-on-write, and on tmpfs every page a clone touches for the first time is allocated
   * in the shared file and never freed.
   */
  snapshotDir?: string;
}

/** Save a snapshot of a VM booted with `snapshotDir`. The VM ends (it is stopped and quits). */
export interface SaveSnapshotRequest extends DeadlineOptions {
  vmId: string;
  /**
   * Shrink the guest's memory to this before saving (default: leave it), so restores only ever grow
   * memory, which is fast, where shrinking is slow. Restores can ask for this much up to the boot size.
   */
  minMemoryMb?: number;
}

/**
 * Capture a running VM into a snapshot directory (`captureSnapshot`): its memory, device state and disk, while
 * it runs. Any VM this driver started or re-adopted can be captured (not only those booted with `snapshotDir`).
 */
export interface CaptureSnapshotRequest extends DeadlineOptions {
  vmId: string;
  /** Created if missing; must not hold a snapshot yet. Put it on a disk filesystem (see `BootVmRequest.snapshotDir`). */
  snapshotDir: string;
  /**
   * - `run`: a live snapshot. The VM runs on while its memory is copied and is stopped only for the last pages
   *   and its device state (milliseconds); it then writes a new disk layer over the snapshot's.
   * - `stop`: a pause. The VM ends with the capture and its disk becomes the snapshot's; restore it with
   *   `takeDisk` to bring the same VM back. On failure the VM runs on as before.
   */
  then: 'run' | 'stop';
  /**
   * What the caller did with the VM's volumes (required when it has any, else the capture is refused with
   * VM_BAD_STATE): `unmounted` — the guest unmounted them for the capture, so the snapshot holds none of their
   * filesystems' state; `held` (with `stop` only) — they stay mounted in the paused guest, nobody else may write
   * them, and its restore puts the same images in the same slots.
   */
  volumes?: 'unmounted' | 'held';
}

/** What `captureSnapshot` made, and what it cost. */
export interface CaptureResult extends SnapshotInfo {
  /** How long the guest was stopped (QEMU's STOP to RESUME); for `stop`, from STOP to the end of the capture. */
  pausedMs: number;
  /** Wall time of the whole capture. */
  durationMs: number;
  /** Bytes the snapshot's memory file takes on disk (its unwritten pages are holes). */
  memoryBytes: number;
  /** Bytes the snapshot's disk layer takes: what the VM wrote since the layer below it. */
  diskBytes: number;
  /** The root disk's virtual size (what the guest sees; a restore starts with it). */
  diskSizeBytes: number;
  /**
   * The snapshot's disk layer (qcow2, over the layers the VM's disk built on): after a `stop` capture, the VM's
   * whole disk as it left it. Other VMs may boot from it as their root disk's backing file.
   */
  diskPath: string;
}

/** A snapshot on disk, as written by `saveSnapshot` (`snapshot.json` in its directory). */
export interface SnapshotInfo {
  dir: string;
  accelerator: Accelerator;
  /**
   * The network the device state was saved with: restores must use it (`user`: QEMU's user-mode network state is
   * in the stream). null: saved without a network backend, so restores choose (template snapshots).
   */
  network: NetworkMode | null;
  vcpuCount: number;
  /** Memory the source VM was booted with: the most a restore may ask for. */
  bootMemoryMb: number;
  /** Memory the guest had when saved: the least a restore may ask for. */
  minMemoryMb: number;
  /** Wall clock of the save, ms since the epoch. */
  savedAtMs: number;
  /** Device state size, bytes (RAM is in a separate file, mapped by restores). */
  stateBytes: number;
}

/** What a snapshot directory depends on outside itself, by absolute path on the host that has it. */
export interface SnapshotDependencies {
  /** Its disk layer's backing file (a qcow2 layer of another snapshot, or an image's raw root filesystem). */
  diskBacking: { path: string; format: 'raw' | 'qcow2' } | null;
  kernel: string;
  initrd: string;
}

/** A complete snapshot as another host needs it: the files to carry, its manifest, what it depends on. */
export interface SnapshotExport {
  /** File names in the snapshot's directory. */
  files: string[];
  /** The snapshot's manifest, opaque to the caller (`importSnapshot` takes it back). */
  manifest: unknown;
  dependencies: SnapshotDependencies;
}

/** Restore a new VM from a snapshot. */
export interface RestoreVmRequest extends DeadlineOptions {
  vmId: string;
  runDir: string;
  snapshotDir: string;
  /** From the snapshot's `minMemoryMb` to its `bootMemoryMb`. */
  memoryMb: number;
  /** Must be the snapshot's `network` when it has one. */
  network: NetworkMode;
  /**
   * Write the snapshot's disk layer itself instead of a new overlay over it: the snapshot is a pause being
   * resumed and is used up. Once the restore succeeded its directory may be removed (its memory file stays
   * mapped by QEMU until the VM ends).
   */
  takeDisk?: boolean;
  /**
   * Volumes to put in the VM's slots (the others keep their placeholder). The guest learned each slot's size when
   * its snapshot's source booted; the driver tells it the attached image's size before it resolves (the guest's
   * kernel then sees the image's whole size; mounting it is the caller's business). A capture of this VM (a pause)
   * and its resume must attach the same volumes.
   */
  volumes?: VolumeAttachment[];
  /**
   * Runs once the hypervisor is in its cgroups (`cgroupPaths`) and before the guest can send anything: before its
   * device state is loaded and its vCPUs run. The host's egress rules for the VM go in here, so that a process
   * left running in the snapshot meets them with its first packet. A rejection fails the restore (stage `restore`).
   */
  beforeRun?: (cgroupPaths: string[]) => Promise<void>;
  /**
   * Leave the guest's network link down after the restore: nothing it sends leaves the VM until `setLink` brings
   * the link up (a pooled VM, whose egress rules are known only once it is handed out).
   */
  linkDown?: boolean;
}

/** A VM found in a run directory when the server starts (see `recover`). */
export interface FoundVm {
  vmId: string;
  runDir: string;
  pid: number;
  startedAtMs: number;
  vcpuCount: number;
  memoryMb: number;
}

export interface RecoverRequest {
  /** The directory whose subdirectories are run directories (the caller puts all of them there). */
  runRoot: string;
  /** Keep (re-adopt) this live VM? Otherwise it is killed. Typically: the store knows it and it has not expired. */
  keep: (vm: FoundVm) => boolean;
}

export interface RecoveryReport {
  adopted: VmInfo[];
  /** Live VMs that were killed because `keep` said no. */
  killed: FoundVm[];
  /** Run directories of VMs that were already dead, now removed with their sockets, disks and limits. */
  cleaned: string[];
}

/**
 * Stages of bringing a VM up, in order; a failure names the one it died in. A cold boot goes through
 * `spawn`, `kernel`, `initramfs`, `init`, `agent` (the console markers of the boot contract tell them apart);
 * a restore through `spawn`, `restore`, `agent`, `memory`.
 */
export type VmStage = 'spawn' | 'kernel' | 'initramfs' | 'init' | 'agent' | 'restore' | 'memory';

/** Progress of a boot or restore. */
export interface VmStageEvent {
  vmId: string;
  stage: VmStage;
  /** The stage was reached (or, for `restore`/`memory`, finished) this long after the process spawned. */
  elapsedMs: number;
}

/** A VM ended. Not emitted for VMs consumed by `saveSnapshot`. */
export interface VmExitEvent {
  vmId: string;
  pid: number;
  /** True after `kill`; false when the guest powered off, panicked or the hypervisor died. */
  expected: boolean;
  exitCode: number | null;
  signal: string | null;
  /** The hypervisor's own account, e.g. `guest-shutdown`, `guest-panic`, `host-qmp-quit`, when it gave one. */
  reason: string | null;
  /** Last lines of the serial console and of the hypervisor's own log. */
  consoleTail: string;
}

/** Something degraded that the operator should know about (log it as a warning). */
export interface VmWarningEvent {
  code: string;
  message: string;
  vmId?: string;
}

export interface VmDriverEvents {
  stage: [VmStageEvent];
  exit: [VmExitEvent];
  warning: [VmWarningEvent];
}

/** What the host offers, found by `prepare`. Each missing piece comes with the reason. */
export interface HostReport {
  accelerator: Accelerator;
  /** Why the requested accelerator was not used (e.g. `auto` fell back to TCG), else null. */
  acceleratorFallbackReason: string | null;
  /** Per-VM CPU/memory/pids limits. */
  resourceLimits: { active: boolean; detail: string };
  /** Guests cannot reach the host's own addresses or private networks. */
  networkGuard: { active: boolean; detail: string };
  /** The hypervisor's own sandbox (e.g. seccomp and an unprivileged user). */
  processSandbox: { active: boolean; detail: string };
  /**
   * Snapshots saved on this host restore only where this key is the same (hypervisor version, machine and
   * devices, kernel command line); callers keep snapshots per key.
   */
  snapshotKey: string;
}

/**
 * A VM that `boot` or `restore` brought up, with what the agent probe's handshake produced (`C`: e.g. the
 * connected agent client, handed over so the caller does not open a second connection; `void` for a probe
 * that closes its channel).
 */
export type StartedVm<C> = VmInfo & { agent: C };

/** A hypervisor driver. All methods are safe to call concurrently for different VMs. */
export interface VmDriver<C = void> {
  /** Progress, exits and warnings; the driver never logs. */
  readonly events: EventEmitter<VmDriverEvents>;
  /** Checks the host once (accelerator self-test, limits, guard); the other methods call it if needed. */
  prepare(image: GuestImageFiles): Promise<HostReport>;
  /** Cold-boots a VM; resolves when its agent answers. Rejects with `VmBootError` naming the stage. */
  boot(request: BootVmRequest): Promise<StartedVm<C>>;
  /** Saves a VM booted with `snapshotDir`; the caller prepared the agent and closed its connection first. */
  saveSnapshot(request: SaveSnapshotRequest): Promise<SnapshotInfo>;
  /** Reads a complete snapshot from disk, or undefined when there is none (or it is incomplete). */
  readSnapshot(dir: string): Promise<SnapshotInfo | undefined>;
  /** What a complete snapshot holds and depends on, to carry it to another host; undefined when there is none. */
  exportSnapshot(dir: string): Promise<SnapshotExport | undefined>;
  /**
   * Completes a snapshot whose files another host exported were copied into `dir`: re-pointed at this host's copies
   * of its dependencies, then sealed (it is complete from then on).
   */
  importSnapshot(dir: string, manifest: unknown, dependencies: SnapshotDependencies): Promise<SnapshotInfo>;
  /** Re-points a disk layer (not in use) at another copy of its backing file: the header only, the bytes are the same. */
  rebaseDiskLayer(layerPath: string, backing: { path: string; format: 'raw' | 'qcow2' }): Promise<void>;
  /** Restores a new VM; resolves when its agent answers and its memory is what was asked for. */
  restore(request: RestoreVmRequest): Promise<StartedVm<C>>;
  /** Brings a live VM's network link up or down (a VM restored with `linkDown`); no-op without a network. */
  setLink(vmId: string, up: boolean): Promise<void>;
  /**
   * Captures a running VM's memory, device state and disk into a snapshot that `restore` accepts (see
   * `CaptureSnapshotRequest`). The caller quiesced the guest's agent first (its transfer share unmounted).
   */
  captureSnapshot(request: CaptureSnapshotRequest): Promise<CaptureResult>;
  /**
   * Puts volumes in empty slots of a running VM (as a restore's `volumes` would have): the guest sees each slot's
   * new size at once, and mounting is the caller's. Absent: the driver cannot, and a VM with volumes is restored
   * for them.
   */
  attachVolumes?(vmId: string, volumes: VolumeAttachment[]): Promise<void>;
  /**
   * Grows a live VM's root disk to `sizeMb` (a disk already that large is left alone; disks never shrink). The
   * guest is told at once and sees a larger block device; growing its filesystem into it is the guest's job.
   * The host file grows only as the guest writes, and never past the disk's size plus its format's metadata.
   */
  growDisk(vmId: string, sizeMb: number): Promise<void>;
  /** Kills a VM and removes its run directory, disk overlay and limits; unknown ids are a no-op. */
  kill(vmId: string): Promise<void>;
  /** Live VMs of this driver instance. */
  list(): VmInfo[];
  get(vmId: string): VmInfo | undefined;
  /** On start: re-adopts or kills the VMs left by an earlier server process and cleans up dead ones. */
  recover(request: RecoverRequest): Promise<RecoveryReport>;
  /** Kills every live VM (graceful shutdown when VMs should not outlive the server). */
  killAll(): Promise<void>;
}

/**
 * Confirms the guest agent answers; the driver uses it to know a VM is up. What the handshake produces (`C`)
 * is handed to the caller of `boot`/`restore` with the VM, so that a probe may keep its connection open
 * instead of the caller making a second one (under TCG a fresh handshake with a just-restored guest costs
 * 100–250 ms).
 */
export interface AgentProbe<C = void> {
  /**
   * Resolves once the agent behind `socketPath` completed a handshake; rejects when `signal` aborts. It is
   * called while the guest is still booting, so it must retry until then.
   */
  waitUntilReady(socketPath: string, options: { vmId: string; signal: AbortSignal; transferDir: string | null }): Promise<C>;
  /** Closes what `waitUntilReady` produced when the VM fails to come up after all (e.g. its memory stage). */
  release(connection: C): Promise<void>;
}
