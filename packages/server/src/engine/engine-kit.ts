/**
 * What the parts of the VM engine share: its options and events, the VMs it tracks, and the host it prepared.
 * `SandboxEngine` (sandbox-engine.ts) implements `EngineKit` and composes the parts over it: restores.ts (snapshot
 * sets and restores), acquisition.ts (acquire, the warm pool), capture.ts (snapshot, pause, resume) and
 * recovery.ts (start, re-adoption).
 */
import type { EventEmitter } from 'node:events';
import type { AgentClient } from '../agent/index.ts';
import path from 'node:path';
import type { EgressTarget, EngineEndReason } from '../core/vm-engine.ts';
import type { GuestImage } from '../image/index.ts';
import type { Accelerator, HostReport, NetworkMode, VcpuCount, VmDriver, VmInfo } from '../vm/vm-driver.ts';
import type { ArtifactCache, ArtifactStore } from '../storage/artifacts/index.ts';
import type { AgentLink } from './agent-link.ts';
import type { EngineArtifacts } from './artifacts.ts';
import type { ClientGuestAgent } from './guest-agent.ts';
import type { MemoryTier } from './snapshot-variants.ts';
import type { OciImageLoader } from './template-builds.ts';
import type { PersistedVm, VmStateStore } from './vm-state-store.ts';
import type { WarmUpReport } from './warm-up.ts';
import type { VolumeTools } from './volumes.ts';

export interface SandboxEngineOptions {
  nodeId: string;
  /** Its agent probe hands over the connected agent client with each VM (`agentClientHandoff`). */
  driver: VmDriver<AgentClient>;
  /** Builds or finds the guest image (called once, at start). */
  loadImage: () => Promise<GuestImage>;
  /** Root of the snapshot variants (traversable by the VM user). */
  snapshotRoot: string;
  /**
   * Where this server keeps the snapshots users take of their VMs (`snapshots/<id>`), paused VMs
   * (`paused/<vm id>`) and the templates built from OCI images (`templates/<id>`): on disk, traversable by the VM
   * user, and this server's alone.
   */
  captureRoot: string;
  /** Builds the guest image of an OCI reference, for template builds (`template-builds.ts`). */
  loadOciImage: OciImageLoader;
  /** The engine's own state (public ids, deadlines); private to this server. */
  stateDir: string;
  /** Per-VM run directories; the VM user must be able to traverse it. One per server: recovery reaps strangers. */
  runRoot: string;
  network: NetworkMode;
  /** Idle restored VMs kept at least per vCPU variant (of `poolMemoryMb`); 0 disables the pool. */
  poolSize: number;
  /** The most idle VMs per variant the pool grows to after bursts (`warm-pool.ts`); below `poolSize` it is `poolSize`. */
  poolMax?: number;
  /**
   * Memory (MiB) the host must keep available: below it acquisitions fail with HOST_MEMORY_LOW and the pool is not
   * refilled (`host-memory.ts`); 0 or absent disables the check.
   */
  minFreeMemoryMb?: number;
  /**
   * Restores in progress at once (pool refills included); 0 = no limit. Under TCG a restore is CPU-bound (the
   * guest's code is translated anew in each QEMU), and ten at once on two cores each took ~50 % more CPU than
   * one alone did.
   */
  maxConcurrentRestores: number;
  /** vCPU variants to keep warm and to snapshot at start. */
  warmVcpuCounts: VcpuCount[];
  /**
   * Memory of pooled VMs: the usual request (a request for other memory restores a fresh VM). This size has
   * snapshots booted with exactly that much memory; other sizes use the balloon tiers below.
   */
  poolMemoryMb: number;
  /**
   * Memory tiers, ascending by boot size: a request is served by the first tier whose boot size covers it.
   * Requests below the first tier's minimum get that minimum (the guest's agent needs room to run).
   */
  memoryTiers: MemoryTier[];
  /** Kill every VM when the engine closes (otherwise they are re-adopted by the next start). */
  killOnClose: boolean;
  /**
   * Free space (MiB) the filesystem of `runRoot` must keep: below it acquisitions fail with HOST_STORAGE_LOW
   * and the pool is not refilled; 0 disables the check.
   */
  minFreeDiskMb: number;
  /**
   * How long a dropped agent link of a live VM may take to reconnect (`agent-link.ts`); a VM whose link is
   * not back by then is killed and reported ended with `agent_lost`.
   */
  agentReconnectTimeoutMs: number;
  /**
   * Guest images and snapshot sets no engine on the machine used for this long are removed at start
   * (`image/cache-retention.ts`); 0 keeps everything.
   */
  cacheRetentionMs: number;
  /** The host's mkfs.ext4, which formats new volumes (default: /usr/sbin). */
  volumeTools?: VolumeTools;
  /**
   * The cluster's object store for paused VMs, snapshots and templates (`artifacts.ts`) and this node's bounded
   * cache of them; absent: they stay in `captureRoot` on this node.
   */
  artifacts?: { store: ArtifactStore; cache: ArtifactCache; gcGraceMs: number } | null;
}

/** What the engine tells the process (which decides what to log). */
export interface SandboxEngineEvents {
  ready: [{ host: HostReport; image: GuestImage; adopted: number; readyMs: number }];
  progress: [string];
  warning: [{ code: string; message: string; vmId?: string }];
  acquired: [{ vmId: string; fromPool: boolean; ms: number }];
  /** A VM for the warm pool ran a first request's paths (see `warm-up.ts`), with how long each took. */
  warmed: [{ driverId: string } & WarmUpReport];
  /** The VM's identity fix-up is applied (its agent answers operations from here on). */
  identified: [{ vmId: string; ms: number }];
  /** The VM's disk and root filesystem grew to its quota. */
  diskGrown: [{ vmId: string; diskMb: number; ms: number }];
  /**
   * One call to a VM's agent ended (`call`: exec, run_python, write_file, …), with how long it took (the wait for
   * the VM's identity and link included; an exec lasts as long as its command) and whether it succeeded.
   */
  'agent-call': [{ call: string; ms: number; ok: boolean }];
  /** A live VM's agent link dropped, came back, or was given up (the VM is then killed). */
  'agent-link': [{ vmId: string; state: 'dropped' | 'restored' | 'lost'; message: string }];
}

/** A VM the engine runs and tracks: its persisted state, its agent link and agent. */
export interface LiveEntry {
  state: PersistedVm;
  link: AgentLink;
  agent: ClientGuestAgent;
  /** Resolves once the VM has its identity; operations wait for it. */
  ready: Promise<void>;
}

/** A restored VM that has no user yet (in the pool, or about to be handed out). */
export interface RestoredVm {
  info: VmInfo;
  client: AgentClient;
  vcpuCount: VcpuCount;
  memoryMb: number;
}

/**
 * How a restore meets the network: `prepare` runs while the restored VM is still paused, in its cgroup (its egress
 * rules), or `linkDown` keeps its link down until the VM is handed out (a pooled VM: its owner is not known yet).
 */
export interface RestoreNetwork {
  prepare?: (target: EgressTarget | null) => Promise<void>;
  linkDown?: boolean;
}

/** The host and guest image the engine prepared at start (recovery.ts); unset until then. */
export interface PreparedHost {
  host: HostReport;
  image: GuestImage;
  accelerator: Accelerator;
}

/** What the engine's parts ask of the engine itself. */
export interface EngineKit {
  readonly options: SandboxEngineOptions;
  readonly events: EventEmitter<SandboxEngineEvents>;
  readonly nodeId: string;
  /** Per-VM run directories (`SandboxEngineOptions.runRoot`). */
  readonly runRoot: string;
  /** What each VM's state must survive a restart with. */
  readonly states: VmStateStore;
  /** Set by `close()`: nothing new starts. */
  readonly closed: boolean;
  /** The host and image, once prepared (recovery.ts sets it). */
  prepared: PreparedHost | undefined;
  /** The cluster's object store of captures and templates, when configured. */
  readonly artifacts: EngineArtifacts | null;
  /** Prepares the host, the image and the snapshots (once). */
  start(): Promise<unknown>;
  /** Registers work that close() must wait for. */
  tracked<T>(work: Promise<T>): Promise<T>;
  /** Starts tracking a handed-out VM: its agent link, its deadline. */
  track(state: PersistedVm, client: AgentClient, paths: Pick<VmInfo, 'agentSocketPath' | 'transferDir'>, ready?: Promise<void>): void;
  /** Gives a tracked VM a new agent link (its old one was closed for a capture that failed). */
  relink(state: PersistedVm, client: AgentClient, paths: Pick<VmInfo, 'agentSocketPath' | 'transferDir'>): void;
  /** Stops tracking a VM (its deadline, its persisted state) without ending it. */
  forget(vmId: string): void;
  /** The tracked VM, if live. */
  entry(vmId: string): LiveEntry | undefined;
  /** A live VM once its identity fix-up is done, or NOT_FOUND. */
  liveEntry(vmId: string): Promise<LiveEntry>;
  /** Ends a VM nobody asked to kill (its listeners hear of it first). */
  end(vmId: string, reason: EngineEndReason): void;
  /** Kills a live VM (its volumes flushed first). */
  kill(vmId: string): Promise<void>;
  /** The driver ids of the tracked VMs. */
  trackedDriverIds(): string[];
}

/** Where this server keeps its volumes' images. */
export function volumeRootOf(options: Pick<SandboxEngineOptions, 'captureRoot'>): string {
  return path.join(options.captureRoot, 'volumes');
}
