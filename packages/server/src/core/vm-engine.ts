/**
 * What the core needs from the VM engine, defined here so the core never depends on QEMU or on the agent
 * transport. `src/engine/` implements it over the VmDriver and the agent client; tests of the core that
 * need no real VM may implement it too, but the tests that prove features use the real engine.
 */
import type { Duplex, Readable } from 'node:stream';
import type {
  ExecRequest,
  ExecResult,
  ExtractResponse,
  FileStat,
  FileWriteResponse,
  KeptExecInfo,
  PythonRunRequest,
  PtyExit,
  PtyInfo,
  PythonResetResponse,
  PythonRunResult,
  UsageResponse,
} from '@sandboxd/agent/protocol';
import type { TemplateBuildStep, VmEndReason } from '../model.ts';

export type { KeptExecInfo, PtyExit, PtyInfo };

/** The most volumes one VM may mount (every VM has this many volume slots). */
export const MAX_VOLUMES_PER_VM = 4;

/** How to start a terminal in the guest. */
export interface PtyCreateOptions {
  cols: number;
  rows: number;
  /** Program and arguments. */
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Output kept for re-attaching, 1 KiB to 1 MiB. */
  scrollbackBytes?: number;
}

/** Where an attachment delivers the terminal's output: the scrollback first, then live output, then the exit. */
export interface PtyOutput {
  onOutput(chunk: Buffer): void;
  onExit(exit: PtyExit): void;
}

/** One attachment to a terminal; detaching leaves the terminal running. */
export interface PtyAttachment {
  /** Input, as if typed. */
  write(data: Buffer): void;
  resize(cols: number, rows: number): void;
  detach(): void;
  /** Resolves when the attachment ended (detached, the program exited, or the VM went away). */
  readonly closed: Promise<void>;
}

/**
 * A template's bootable files (an image built by the engine's image layer, e.g. from an OCI reference): the engine
 * makes its snapshots per vCPU count and memory on first use, as it does for the built-in image.
 */
export interface TemplateImage {
  /** Content hash of the files; names the template's snapshot set. */
  hash: string;
  /**
   * The built template these files are of (absent for built-in images): another node finds its own copy by it, or
   * fetches the template from the cluster's object store.
   */
  templateId?: string;
  kernelPath: string;
  initrdPath: string;
  /** The root disk (never written: every VM gets an overlay over it). */
  rootfsPath: string;
  rootfsFormat: 'raw' | 'qcow2';
  /** Extra kernel parameters (e.g. the init of a foreign root filesystem). */
  kernelArgs: string[];
  /** Size of the root filesystem, MiB. */
  diskSizeMb: number;
  /**
   * Where the template's snapshot set lives (a built template keeps it beside its files, so deleting the template
   * removes it); default the engine's shared snapshot root.
   */
  snapshotRoot?: string;
  /**
   * What brings a freshly booted VM of this template to its ready state before its snapshots are saved: a program
   * run as root through the agent that must exit 0 (the browser template's starts Chromium and waits until it
   * answers). What it leaves running is in every VM restored from the snapshots.
   */
  prepare?: { argv: string[]; timeoutMs: number };
  /**
   * Its VMs always have exactly this much memory, and its snapshots are booted with it (no balloon tier: what
   * `prepare` started, e.g. Chromium, would not give memory back for a shrink).
   */
  memoryMb?: number;
}

/**
 * What a VM starts from: a template (the built-in image when `image` is absent), in any vCPU and memory shape, or
 * a snapshot a user took, whose vCPU count and memory it keeps.
 */
export type VmSource = { kind: 'template'; image?: TemplateImage } | { kind: 'snapshot'; snapshotId: string; diskSizeMb: number };

/** A persistent volume to mount in a new VM. */
export interface VolumeMount {
  volumeId: string;
  /** Absolute, normalized path in the guest (the core checks it). */
  mountPath: string;
  readOnly: boolean;
  /** The core's: another node wrote it last, so its image is fetched from the object store first (`fetchVolume`). */
  fetch?: boolean;
}

export interface AcquireVmRequest {
  /** Chosen by the caller (already recorded in the store). */
  vmId: string;
  /** Default: the built-in template. */
  source?: VmSource;
  vcpuCount: number;
  memoryMb: number;
  lifetimeSeconds: number;
  /**
   * Root disk quota, MiB (the user's plan's `diskMb`): the VM's disk and filesystem grow to it in the background
   * once the VM is handed out. Default: the guest image's own filesystem size.
   */
  diskMb?: number;
  /**
   * Volumes to mount, at most `MAX_VOLUMES_PER_VM` (this node's volumes only). A VM with volumes is restored for
   * the purpose (the warm pool's VMs have empty slots) and cannot be snapshotted or paused.
   */
  volumes?: VolumeMount[];
  /**
   * Puts the VM's network in place before anything in it can send (its egress rules, for the hypervisor's cgroup
   * `target`, null when the firewall cannot match it): a restored VM is still paused when this runs, a pooled one
   * has its link down until it resolves. A rejection fails the acquisition (the VM is killed).
   */
  prepareNetwork?: (target: EgressTarget | null) => Promise<void>;
}

export interface AcquiredVm {
  vmId: string;
  /** The snapshot variant it came from, e.g. `snap2`. */
  templateId: string;
  /** The guest's address on its private network (for debugging; nothing routes to it from outside). */
  ip: string;
  startedAt: Date;
  /** When the engine kills it. */
  expiresAt: Date;
  /** It came from the warm pool (already warmed up, see `WarmPoolRequest.warmUp`). */
  pooled: boolean;
}

/**
 * Why the engine ended a VM that nobody asked it to kill: its lifetime is over, QEMU died (or its set-up
 * failed), or its agent link dropped and could not be restored in time (the engine killed it).
 */
export type EngineEndReason = Extract<VmEndReason, 'expired' | 'crashed' | 'agent_lost'>;

/** Where a stream of a kept exec starts in its output: bytes of stdout and of stderr before its first byte. */
export interface KeptExecOffsets {
  stdoutOffset: number;
  stderrOffset: number;
}

/** Output callbacks of a streamed exec. */
export interface ExecOutput {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  /**
   * The program runs, as process `pid` of the guest. `from`: for a kept exec's stream (`keep`, `attachExec`), the
   * offsets where the output this stream delivers starts (an attach gets later ones when older bytes are gone).
   */
  onStarted?(pid: number, from?: KeptExecOffsets): void;
}

/** Where a streamed Python run's output goes as it is written. */
export type PythonOutput = Pick<ExecOutput, 'onStdout' | 'onStderr'>;

/** Signal names a caller may send to a running program's process group (`ExecSignals`). */
export const SENDABLE_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGSTOP', 'SIGCONT'] as const;
export type SendableSignal = (typeof SENDABLE_SIGNALS)[number];

/**
 * Signals for a running exec, sent by its caller at any time: the agent's side attaches once the program runs and
 * gets those sent before then in order.
 */
export class ExecSignals {
  private listener: ((signal: SendableSignal) => void) | null = null;
  private readonly early: SendableSignal[] = [];

  send(signal: SendableSignal): void {
    if (this.listener) this.listener(signal);
    else this.early.push(signal);
  }

  attach(listener: (signal: SendableSignal) => void): void {
    this.listener = listener;
    for (const signal of this.early.splice(0)) listener(signal);
  }
}

/** A live VM's guest agent. */
export interface GuestAgent {
  /**
   * `stdin`: bytes for the program's standard input (it ends when the stream does); without it, /dev/null.
   * `signals`: signals for its process group while it runs; `signal` (abort) gives up on it (the group is killed).
   */
  exec(request: ExecRequest, output: ExecOutput, signal?: AbortSignal, stdin?: Readable, signals?: ExecSignals): Promise<ExecResult>;
  /**
   * Re-attaches to a kept exec (started with `keep: true`) after its stream went away: output from `from` (or the
   * oldest the agent still has: `output.onStarted` says), then live output, and its result. `signal` gives up on this
   * stream only (the process runs on); `stdin`/`signals` as for `exec`. NOT_FOUND when the VM keeps no such process
   * (it was collected, or the VM restarted without its memory).
   */
  attachExec(pid: number, from: KeptExecOffsets, output: ExecOutput, signal?: AbortSignal, stdin?: Readable, signals?: ExecSignals): Promise<ExecResult>;
  /** The VM's kept execs, running or ended and not yet collected (with the `info` their starter gave). */
  listKeptExecs(): Promise<KeptExecInfo[]>;
  /**
   * `signal`: gives up on the run (the agent interrupts it). `output`: the run's output as it is written (the
   * result carries all of it too).
   */
  runPython(request: PythonRunRequest, signal?: AbortSignal, output?: PythonOutput): Promise<PythonRunResult>;
  /** Ends a Python context's interpreter (its state is lost; the next run starts a new one). */
  resetPython(contextId: string): Promise<PythonResetResponse>;
  writeFile(path: string, body: Readable, options?: { mode?: number }): Promise<FileWriteResponse>;
  extractTar(directory: string, body: Readable, options?: { gzip?: boolean }): Promise<ExtractResponse>;
  /** Opens a file for reading: its size and a stream of its bytes. */
  readFile(path: string): Promise<{ size: number; mode: number; stream: Readable }>;
  stat(path: string): Promise<FileStat>;
  /** A directory's entries, sorted by name. */
  listDir(path: string): Promise<FileStat[]>;
  /** Makes a directory (`parents`: and its missing parents, accepting one that exists). */
  mkdir(path: string, options?: { parents?: boolean; mode?: number }): Promise<void>;
  /** Removes a file or an empty directory (`recursive`: a whole tree); false when nothing was there. */
  remove(path: string, options?: { recursive?: boolean }): Promise<boolean>;
  usage(): Promise<UsageResponse>;
  /**
   * A TCP connection to `port` on the guest's loopback (through the agent, no host networking). Rejects with
   * APP_PORT_UNREACHABLE when nothing listens there.
   */
  openTunnel(port: number): Promise<Duplex>;
  /** Starts a program on a new terminal (BAD_REQUEST for a missing program or a bad cwd). */
  createPty(options: PtyCreateOptions): Promise<PtyInfo>;
  listPtys(): Promise<PtyInfo[]>;
  /** NOT_FOUND when the VM has no such terminal (here and below). */
  getPty(id: string): Promise<PtyInfo>;
  resizePty(id: string, cols: number, rows: number): Promise<PtyInfo>;
  /** Ends the terminal's program (SIGHUP, then SIGKILL) and forgets the terminal; answers its final state. */
  killPty(id: string): Promise<PtyInfo>;
  attachPty(id: string, output: PtyOutput): Promise<PtyAttachment>;
}

/**
 * A template build (see {@link VmEngine.buildTemplate}): the OCI image is built into a guest image, booted as a
 * build VM, handed to `inVm` (the build's own steps, e.g. cloning a repository and running a command), captured,
 * and the template's snapshot for this shape is made, so its first VM is a restore.
 */
export interface TemplateBuildRequest {
  /** The template's id: names its files on this node. */
  templateId: string;
  /** Whose template it is (its artifact in the object store is counted against them). */
  userId: number;
  /** An image reference the core checked (`parseImageReference`). */
  ociImage: string;
  /** For the pull only: never written anywhere but skopeo's 0600 auth file, removed after the pull. */
  registryAuth?: { username: string; password: string };
  /** The build VM's shape, which is also the shape whose snapshot is made at the end. */
  vcpuCount: number;
  memoryMb: number;
  /** Aborting kills whatever runs (a tool, the build VM) and rejects. */
  signal: AbortSignal;
  /** A step begins (`resolve` … `mkfs`, `boot`, `snapshot`; `inVm` announces its own). */
  onStep(step: TemplateBuildStep): void;
  /** One line of what the step's tools printed. */
  onOutput(line: string): void;
  /**
   * The build's steps in the running build VM, through its agent. The VM has its identity and its network (the
   * engine's). Rejecting fails the build (throw a `TemplateBuildError` to name the step); the VM is killed.
   */
  inVm(agent: GuestAgent): Promise<void>;
}

/** What a finished build made. */
export interface BuiltTemplate {
  /** The template's bootable files: its own disk layer over the OCI image's root filesystem. */
  image: TemplateImage;
  /** The OCI image config's `Env` (its VMs see it through the agent). */
  env: Record<string, string>;
  /** Digest of the linux/amd64 manifest that was pulled. */
  digest: string;
  /** Milliseconds each step the engine ran took. */
  stepMs: Partial<Record<TemplateBuildStep, number>>;
}

/** A template build that failed: `step` names where, `outputTail` holds the last lines that step printed. */
export class TemplateBuildError extends Error {
  override name = 'TemplateBuildError';
  constructor(
    readonly step: TemplateBuildStep,
    message: string,
    readonly outputTail: string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What capturing a VM made and cost (a live snapshot or a pause). */
export interface CaptureOutcome {
  /** How long the guest was stopped, ms (a pause: the whole capture). */
  pausedMs: number;
  durationMs: number;
  /** Bytes on disk of the memory file, the disk layer (what the VM wrote since its last layer) and the device state. */
  memoryBytes: number;
  diskBytes: number;
  stateBytes: number;
  vcpuCount: number;
  memoryMb: number;
  /** The root disk's size, MiB (a clone starts with it). */
  diskSizeMb: number;
}

/** Bytes the object store holds for one kind of artifact, or one user. */
export interface StorageUsage {
  artifacts: number;
  /** What the files would take whole (holes and shared chunks counted). */
  logicalBytes: number;
  /** Their non-zero chunks (what a download moves). */
  dataBytes: number;
}

/** The cluster's object store of paused VMs, snapshots and templates, and this node's cache of them. */
export interface ClusterStorage {
  /** Where it is (`s3://bucket/prefix at …`, `local:/…`). */
  readonly description: string;
  usage(): Promise<{ byKind: Record<string, StorageUsage>; byUser: Map<number, StorageUsage>; chunks: { count: number; bytes: number } }>;
  /** This node's cache: its limit, what it holds, hits and misses by kind since the node started. */
  cacheStats(): { limitBytes: number; usedBytes: number; entries: number; hits: Record<string, number>; misses: Record<string, number> };
  /** Deletes chunks no artifact references (older than the grace period). */
  collectGarbage(options?: { dryRun?: boolean }): Promise<{ chunks: number; referenced: number; deleted: number; freedBytes: number; keptYoung: number }>;
  /** Keeps this node's copies within the cache's limit (least recently used first; never one a local copy builds on). */
  evict(): Promise<{ evicted: number; freedBytes: number }>;
}

/** Whose a capture is: its artifact in the object store is counted against this user. */
export interface CaptureOwner {
  userId: number;
}

/**
 * A pause whose upload to the object store failed: the VM's capture is kept on this node and the caller resumes
 * it here (`resume`), so that the VM runs on as if the pause had not been asked for.
 */
export class PauseNotUploaded extends Error {
  constructor(
    readonly vmId: string,
    readonly reason: Error,
  ) {
    super(`pausing VM ${vmId}: ${reason.message}`, { cause: reason });
  }
}

/** Resume a paused VM (see {@link VmEngine.pause}). */
export interface ResumeVmRequest {
  vmId: string;
  /** Lifetime left, counted from the resume. */
  lifetimeSeconds: number;
  /** Root disk quota, MiB (as in `AcquireVmRequest`). */
  diskMb?: number;
  /** As in `AcquireVmRequest`: runs while the resumed VM is still paused, in its new hypervisor's cgroup. */
  prepareNetwork?: (target: EgressTarget | null) => Promise<void>;
  /** The volumes it had when it was paused, in their slots' order: they come back in the same slots. */
  volumes?: VolumeMount[];
}

/**
 * Whether this node can restore the built-in template's VMs (see {@link VmEngine.defaultTemplateState}): `idle`
 * before the engine was asked to start, `building` while it prepares (image, host, snapshots of the warm shapes),
 * `ready` once those snapshots are made, `failed` when preparing them failed.
 */
export type DefaultTemplateState = 'idle' | 'building' | 'ready' | 'failed';

/** How soon a VM could be handed out now (see {@link VmEngine.estimateAcquire}). */
export interface AcquireEstimate {
  /** A ready VM is waiting in the warm pool: acquisition takes milliseconds. */
  pooled: boolean;
  /** Restores that would run or wait before this one's (0: it would start at once). */
  position: number;
  /** Expected time until the VM is ready, from recent restore times and the restores ahead of it. */
  waitMs: number;
}

/** How the warm pool keeps VMs of one template and shape (see {@link VmEngine.keepWarm}). */
export interface WarmPoolRequest {
  template: TemplateImage;
  vcpuCount: number;
  memoryMb: number;
  /** Idle VMs to keep; 0 stops refilling (VMs already idle stay until taken or the engine closes). */
  size: number;
  /**
   * Runs in each restored VM before it enters the pool (after its clock and entropy are fixed up), e.g. a first
   * page load, so that the first real request does not pay for it; a rejection discards the VM.
   */
  warmUp?: (agent: GuestAgent) => Promise<void>;
}

/** How the host's egress firewall recognises one VM's hypervisor: its cgroup v2 (path below /sys/fs/cgroup, depth). */
export interface EgressTarget {
  cgroupPath: string;
  level: number;
}

export interface VmEngine {
  /** The node this engine runs VMs on (recorded with each VM). */
  readonly nodeId: string;
  /** Prepares the engine (host checks, image, snapshots, re-adoption of VMs a previous process left); idempotent. */
  start(): Promise<unknown>;
  /**
   * Resolves once the VMs an earlier process of this node left running are re-adopted or reaped (starting the
   * engine if needed): before that, a VM the store records live here may still come back, so nobody may
   * conclude it is gone. Much sooner than `start()`, which also builds snapshots and fills the pool.
   */
  recovered(): Promise<void>;
  /**
   * Where the built-in template stands on this node (read-only: it starts nothing): ready once the snapshots of the
   * warm shapes are made, so a VM is a restore away. The warm pool's fill is not part of it: load drains the pool.
   */
  defaultTemplateState(): DefaultTemplateState;
  /**
   * A ready VM: restored, identity set, agent answering; counting its lifetime from now. Rejects with
   * `AppError('HOST_STORAGE_LOW')` when the host's disk is below its free-space floor (nothing is created).
   */
  acquire(request: AcquireVmRequest): Promise<AcquiredVm>;
  /**
   * How long an `acquire` of this shape would take if asked now: restores beyond what the host can run at once
   * queue, first come first served, so a burst can be told its place instead of timing out half-made.
   */
  estimateAcquire(request: Pick<AcquireVmRequest, 'vcpuCount' | 'memoryMb'>): AcquireEstimate;
  /**
   * The agent of a live VM on this node, or null when the VM is not (or no longer) running here. A VM whose
   * agent link is down is still live: its operations wait for the reconnection or fail; a link that cannot
   * be restored ends the VM (`agent_lost`).
   */
  agent(vmId: string): GuestAgent | null;
  /** Moves a live VM's end to `expiresAt` (kept across a restart of this node); false when it is not live here. */
  setDeadline(vmId: string, expiresAt: Date): boolean;
  /** Kills a VM and removes everything it left; resolves when it is gone. Unknown ids are a no-op. */
  kill(vmId: string): Promise<void>;
  /**
   * Snapshots a live VM while it runs (stopped for milliseconds): a new VM can start from `snapshotId` later
   * (`source: {kind: 'snapshot'}`). The VM's disk builds on the snapshot from now on, as its clones' do, so the
   * snapshot must be kept while any of them lives.
   */
  snapshot(vmId: string, snapshotId: string, owner?: CaptureOwner): Promise<CaptureOutcome>;
  /** Removes a snapshot's files (the caller made sure nothing builds on it). */
  deleteSnapshot(snapshotId: string): Promise<void>;
  /**
   * Pauses a live VM: its memory, processes and disk go to this node's disk and its QEMU ends, freeing memory and
   * CPU. The VM is no longer live (no end is reported); `resume` brings it back under the same id.
   */
  pause(vmId: string, owner?: CaptureOwner): Promise<CaptureOutcome>;
  /**
   * Whether paused VMs, users' snapshots and templates live in the cluster's object store: any node resumes or
   * starts them, and a node's loss loses none (a pause that cannot be uploaded fails with OBJECT_STORE_UNAVAILABLE
   * and its VM is resumed where it was, `PauseNotUploaded`). False: they stay on the node that made them.
   */
  readonly portableCaptures: boolean;
  /** The cluster's object store of captures and templates as operators see it; null when captures stay on their node. */
  readonly storage: ClusterStorage | null;
  /** Brings a paused VM back, the same machine (files, processes, ports, interpreters), counting `lifetimeSeconds` from now. */
  resume(request: ResumeVmRequest): Promise<AcquiredVm>;
  /** Removes what a paused VM left (it was killed while paused). */
  discardPause(vmId: string): Promise<void>;
  /** Makes volume `volumeId` on this node: `sizeMb` of empty ext4 filesystem. */
  createVolume(volumeId: string, sizeMb: number): Promise<void>;
  /** Removes a volume's image (the caller made sure no VM has it attached). */
  deleteVolume(volumeId: string): Promise<void>;
  /**
   * With captures in the object store: uploads a volume's image (its writer ended or paused, its data flushed), so
   * that another node can mount it next, and fetches the cluster's copy over this node's (another node wrote it last).
   */
  publishVolume(volumeId: string, owner: CaptureOwner): Promise<void>;
  fetchVolume(volumeId: string): Promise<void>;
  /**
   * Builds a template from an OCI image (see `TemplateBuildRequest`). The build VM is never a user's: it is not
   * pooled, counted or reported, and it is killed whatever fails. Rejects with `TemplateBuildError`.
   */
  buildTemplate(request: TemplateBuildRequest): Promise<BuiltTemplate>;
  /** Removes a template's files and its snapshot set on this node (also what a failed or cancelled build left). */
  deleteTemplate(templateId: string): Promise<void>;
  /**
   * Keeps restored VMs of a template (not only the built-in one) ready for `acquire`, which takes one when the
   * source's template, vCPU count and memory match.
   */
  keepWarm(request: WarmPoolRequest): void;
  /** Idle pooled VMs of a template (default the built-in one), per `vcpus:memoryMb`. */
  poolCounts(template?: TemplateImage): Record<string, number>;
  /** Ids of the VMs running on this node (after a restart: those re-adopted). */
  liveVmIds(): string[];
  /**
   * How the egress firewall recognises a live VM of this node, or null when it cannot here (no cgroup v2
   * under /sys/fs/cgroup, cgroups off) or the VM is not live: then no egress policy can be enforced on it.
   */
  egressTarget(vmId: string): Promise<EgressTarget | null>;
  /**
   * Called when a VM ends without being asked to (deadline reached, QEMU died, agent lost), before the engine
   * lets go of it: from the moment `agent()` answers null for such a VM, its listeners have been called.
   */
  onVmEnded(listener: (vmId: string, reason: EngineEndReason) => void): void;
  /**
   * Called when a VM reaches its deadline, while it still runs; the engine ends it (`onVmEnded`, `expired`)
   * once every listener settled, so a listener bounds its own time (the VM's pre-stop hook runs here).
   */
  onBeforeExpiry(listener: (vmId: string) => Promise<void>): void;
}
