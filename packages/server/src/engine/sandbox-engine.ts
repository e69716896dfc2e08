/**
 * The VM engine: the core's `VmEngine` over any `VmDriver`. It restores VMs from per-vCPU snapshots
 * (keeping a warm pool of restored, idle VMs for near-instant acquisition), gives each its identity and
 * fresh entropy, kills it at its deadline, reports crashes, and after a server restart re-adopts the VMs
 * that are still within their lifetime. It starts lazily: the first acquire (or `start()`) prepares the
 * host, the image and the snapshots.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit, { type LimitFunction } from 'p-limit';
import { AgentClient } from '../agent/index.ts';
import { AppError } from '../core/errors.ts';
import {
  MAX_VOLUMES_PER_VM,
  TemplateBuildError,
  type AcquiredVm,
  type AcquireEstimate,
  type AcquireVmRequest,
  type BuiltTemplate,
  type CaptureOutcome,
  type EngineEndReason,
  type GuestAgent,
  type ResumeVmRequest,
  type TemplateBuildRequest,
  type TemplateImage,
  type VmEngine,
  type VolumeMount,
  type WarmPoolRequest,
  type EgressTarget,
} from '../core/vm-engine.ts';
import { cgroup2Mounts, classifierOf } from '../net/egress/cgroup-classifier.ts';
import { MARK_INTERVAL_MS, markInUse, pruneGuestImages, type GuestImage } from '../image/index.ts';
import { VmError } from '../vm/vm-errors.ts';
import { VCPU_COUNTS, VOLUME_SLOT_COUNT, type Accelerator, type CaptureResult, type HostReport, type NetworkMode, type VcpuCount, type VmDriver, type VmInfo, type VolumeAttachment } from '../vm/vm-driver.ts';
import { AgentLink } from './agent-link.ts';
import { DeadlineScheduler } from './deadline-scheduler.ts';
import { assertHostStorage, growRootFilesystem } from './disk-quota.ts';
import { ClientGuestAgent } from './guest-agent.ts';
import { pruneSnapshotSets, SnapshotVariants, variantOf, type MemoryTier } from './snapshot-variants.ts';
import { buildTemplate, removeTemplateFiles, templateDir, type OciImageLoader } from './template-builds.ts';
import { VmStateStore, type PersistedVm } from './vm-state-store.ts';
import { WarmPool } from './warm-pool.ts';
import { warmUp, type WarmUpReport } from './warm-up.ts';
import { createVolumeImage, DEFAULT_VOLUME_TOOLS, deleteVolumeImage, flushVolumes, mountVolumes, volumeImagePath, type VolumeTools } from './volumes.ts';

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
  /** Idle restored VMs kept per vCPU variant (of `poolMemoryMb`); 0 disables the pool. */
  poolSize: number;
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
  /** A live VM's agent link dropped, came back, or was given up (the VM is then killed). */
  'agent-link': [{ vmId: string; state: 'dropped' | 'restored' | 'lost'; message: string }];
}

interface LiveEntry {
  state: PersistedVm;
  link: AgentLink;
  agent: ClientGuestAgent;
  /** Resolves once the VM has its identity; operations wait for it. */
  ready: Promise<void>;
}

/** A restored VM that has no user yet (in the pool, or about to be handed out). */
interface RestoredVm {
  info: VmInfo;
  client: AgentClient;
  vcpuCount: VcpuCount;
  memoryMb: number;
}

/**
 * How a restore meets the network: `prepare` runs while the restored VM is still paused, in its cgroup (its egress
 * rules), or `linkDown` keeps its link down until the VM is handed out (a pooled VM: its owner is not known yet).
 */
interface RestoreNetwork {
  prepare?: (target: EgressTarget | null) => Promise<void>;
  linkDown?: boolean;
}

/** How long a capture may keep the guest's file transfers waiting should the host not come back to thaw them. */
const CAPTURE_HOLD_MS = 120_000;

export class SandboxEngine implements VmEngine {
  readonly events = new EventEmitter<SandboxEngineEvents>();
  readonly nodeId: string;
  private readonly live = new Map<string, LiveEntry>();
  private readonly byDriverId = new Map<string, string>();
  private readonly deadlines = new DeadlineScheduler();
  private readonly states: VmStateStore;
  private readonly endedListeners: ((vmId: string, reason: EngineEndReason) => void)[] = [];
  private readonly expiryListeners: ((vmId: string) => Promise<void>)[] = [];
  private readonly pool: WarmPool<string, RestoredVm>;
  /** The templates of the pool's keys and their warm-ups (only those kept warm are taken from the pool). */
  private readonly poolTemplates = new Map<string, { template: TemplateImage; warmUp?: WarmPoolRequest['warmUp'] }>();
  /** Each template's snapshot set, by the template's hash. */
  private readonly snapshotSets = new Map<string, SnapshotVariants>();
  private readonly runRoot: string;
  private readonly restoreSlot: LimitFunction;
  /**
   * Moving average of how long a restore takes once it has its slot (until its agent answers); what a queued
   * acquisition is told to expect. Starts at a TCG-sized guess until the first restore is measured.
   */
  private restoreMsAverage = 1500;
  private starting: Promise<SnapshotVariants> | undefined;
  /** Settles once the VMs an earlier process left are re-adopted or reaped (the first part of `start`). */
  private recovering: Promise<void> | undefined;
  private closed = false;
  /** Aborted by close(): template builds in flight stop (their build VMs are killed). */
  private readonly closing = new AbortController();
  /** Restores under way: close() waits for them, so no VM comes up after the engine closed. */
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(private readonly options: SandboxEngineOptions) {
    this.nodeId = options.nodeId;
    this.runRoot = options.runRoot;
    this.restoreSlot = pLimit(options.maxConcurrentRestores > 0 ? options.maxConcurrentRestores : Number.POSITIVE_INFINITY);
    fs.mkdirSync(this.runRoot, { recursive: true, mode: 0o711 });
    this.states = new VmStateStore(options.stateDir);
    this.pool = new WarmPool<string, RestoredVm>({
      size: options.poolSize,
      create: (key) => {
        const [, vcpus, memory] = key.split(':');
        const { template, warmUp: templateWarmUp } = this.poolTemplates.get(key)!;
        return this.restoreForPool(template, Number(vcpus) as VcpuCount, Number(memory), templateWarmUp);
      },
      destroy: (vm) => this.discard(vm),
      onError: (key, error) => this.events.emit('warning', { code: 'POOL_REFILL_FAILED', message: `warm pool ${key}: ${(error as Error).message}` }),
    });
    options.driver.events.on('exit', (event) => {
      const vmId = this.byDriverId.get(event.vmId);
      if (!vmId || event.expected) return;
      const entry = this.live.get(vmId);
      this.forget(vmId);
      void entry?.link.close();
      for (const listener of this.endedListeners) listener(vmId, 'crashed');
    });
    options.driver.events.on('warning', (warning) => this.events.emit('warning', warning));
  }

  /** Prepares everything a first acquire needs (host checks, image, snapshots, re-adoption, pool). */
  start(): Promise<SnapshotVariants> {
    this.starting ??= this.init();
    return this.starting;
  }

  recovered(): Promise<void> {
    this.start().catch(() => {}); // its failure reaches the caller through `recovering`
    return this.recovering!;
  }

  acquire(request: AcquireVmRequest): Promise<AcquiredVm> {
    return this.tracked(this.acquireUntracked(request));
  }

  estimateAcquire(request: Pick<AcquireVmRequest, 'vcpuCount' | 'memoryMb' | 'source'>): AcquireEstimate {
    const key = this.poolKeyOf(request);
    if (key && (this.pool.counts()[key] ?? 0) > 0) return { pooled: true, position: 0, waitMs: 0 };
    const slots = this.restoreSlot.concurrency;
    const ahead = this.restoreSlot.activeCount + this.restoreSlot.pendingCount;
    // This restore starts once `ahead - slots + 1` of those ahead have finished; they finish `slots` at a time.
    const rounds = Number.isFinite(slots) ? Math.floor(ahead / slots) + 1 : 1;
    return { pooled: false, position: ahead, waitMs: Math.round(rounds * this.restoreMsAverage) };
  }

  /** Registers work that close() must wait for. */
  private tracked<T>(work: Promise<T>): Promise<T> {
    this.inflight.add(work);
    const done = () => this.inflight.delete(work);
    void work.then(done, done);
    return work;
  }

  private async acquireUntracked(request: AcquireVmRequest): Promise<AcquiredVm> {
    const started = Date.now();
    if (!(VCPU_COUNTS as readonly number[]).includes(request.vcpuCount)) throw new Error(`vcpu_count must be one of ${VCPU_COUNTS.join(', ')}`);
    const vcpuCount = request.vcpuCount as VcpuCount;
    if (this.closed) throw new Error('the VM engine is shutting down');
    await this.start();
    await assertHostStorage(this.runRoot, this.options.minFreeDiskMb);
    const source = request.source ?? { kind: 'template' };
    let vm: RestoredVm;
    let pooled: RestoredVm | undefined;
    let baseDiskMb: number;
    let templateId: string;
    const volumes = request.volumes ?? [];
    const attachments = await this.prepareVolumes(volumes);
    const network: RestoreNetwork = request.prepareNetwork ? { prepare: request.prepareNetwork } : {};
    if (source.kind === 'snapshot') {
      vm = await this.restoreSnapshot(source.snapshotId, vcpuCount, request.memoryMb, attachments, network);
      baseDiskMb = source.diskSizeMb;
      templateId = source.snapshotId;
    } else {
      const template = source.image ?? this.builtinTemplate();
      // The pool's VMs have empty volume slots, filled only at restore.
      const key = volumes.length === 0 ? this.poolKeyOf(request) : undefined;
      pooled = key ? this.pool.take(key) : undefined;
      if (pooled && pooled.client.connected) pooled = (await this.releaseLink(pooled, request.prepareNetwork)) ? pooled : undefined;
      vm = pooled && pooled.client.connected ? pooled : await this.restore(template, vcpuCount, request.memoryMb, attachments, network);
      if (pooled && vm !== pooled) void this.discard(pooled);
      baseDiskMb = template.diskSizeMb;
      templateId = variantOf(vcpuCount);
    }
    const diskMb = Math.max(request.diskMb ?? baseDiskMb, baseDiskMb);
    if (this.closed) {
      await this.discard(vm);
      throw new Error('the VM engine is shutting down');
    }
    const now = Date.now();
    const state: PersistedVm = {
      driverId: vm.info.vmId,
      vmId: request.vmId,
      vcpuCount,
      memoryMb: request.memoryMb,
      templateId,
      startedAtMs: now,
      expiresAtMs: now + request.lifetimeSeconds * 1000,
      diskMb,
      ...(volumes.length > 0 ? { volumes } : {}),
    };
    this.states.write(state);
    const identified = this.applyIdentity(request.vmId, vm.client, started);
    this.track(state, vm.client, vm.info, identified);
    if (volumes.length > 0) {
      // Handed out with its volumes mounted, or not at all.
      try {
        await identified;
        await mountVolumes(vm.client, volumes);
      } catch (error) {
        await this.kill(request.vmId);
        throw error;
      }
    }
    if (diskMb > baseDiskMb) this.growToQuota(state, diskMb, identified);
    this.events.emit('acquired', { vmId: request.vmId, fromPool: vm === pooled, ms: Date.now() - started });
    return {
      vmId: request.vmId,
      templateId: state.templateId,
      ip: this.options.network === 'user' ? '10.0.2.15' : '',
      startedAt: new Date(state.startedAtMs),
      expiresAt: new Date(state.expiresAtMs),
      pooled: vm === pooled,
    };
  }

  /**
   * Hands a pooled VM's network to its owner: its egress rules first (`prepare`), then its link, which stayed down
   * while it waited in the pool. False (the VM discarded) when the link cannot come up; a failed `prepare` throws.
   */
  private async releaseLink(vm: RestoredVm, prepare: RestoreNetwork['prepare']): Promise<boolean> {
    try {
      await prepare?.(await this.targetOf(vm.info.cgroupPaths));
    } catch (error) {
      await this.discard(vm);
      throw error;
    }
    try {
      await this.options.driver.setLink(vm.info.vmId, true);
      return true;
    } catch {
      await this.discard(vm);
      return false;
    }
  }

  /** How the egress firewall recognises a hypervisor in `cgroupPaths`, or null when it cannot. */
  private async targetOf(cgroupPaths: readonly string[]): Promise<EgressTarget | null> {
    const mounts = await cgroup2Mounts();
    for (const dir of cgroupPaths) {
      const target = classifierOf(dir, mounts);
      if (target) return target;
    }
    return null;
  }

  /**
   * Gives a handed-out VM its identity (hostname, VM id) with a fresh clock and entropy, while the caller goes
   * on: the VM's agent holds every operation until it is done, so nothing sees the VM without it. A pooled VM
   * had its clock and entropy set when it entered the pool, which makes this call the cheap one. A VM whose
   * fix-up fails is killed and reported as crashed.
   */
  private applyIdentity(vmId: string, client: AgentClient, startedMs: number, keepIdentity = false): Promise<void> {
    const identity = client.restore({ hostname: vmId, vmId, keepIdentity, timeoutMs: 15_000 }).then(() => {
      this.events.emit('identified', { vmId, ms: Date.now() - startedMs });
    });
    identity.catch((error: unknown) => {
      if (!this.live.has(vmId)) return; // killed meanwhile
      this.events.emit('warning', { code: 'VM_IDENTITY_FAILED', message: `VM ${vmId}: the identity fix-up failed: ${(error as Error).message}`, vmId });
      this.end(vmId, 'crashed');
    });
    return identity;
  }

  /**
   * Grows the VM's disk to its quota once its identity is set, in the background (see `disk-quota.ts`). A
   * failure leaves the VM running on the image's smaller disk and is reported as a warning.
   */
  private growToQuota(state: PersistedVm, diskMb: number, identified: Promise<void>): void {
    const started = Date.now();
    const current = () => this.live.get(state.vmId)?.state === state;
    void identified
      .then(() => sleep(DISK_GROWTH_DELAY_MS[this.accelerator ?? 'tcg']))
      .then(() => {
        const entry = this.live.get(state.vmId);
        if (!entry || entry.state !== state) throw new Error('the VM ended');
        // Through the link: a dropped link that reconnected has a new client.
        return entry.link.connected();
      })
      .then((client) => growRootFilesystem(this.options.driver, state.driverId, client, diskMb))
      .then(
        () => this.events.emit('diskGrown', { vmId: state.vmId, diskMb, ms: Date.now() - started }),
        (error: Error) => {
          if (!current()) return; // killed meanwhile, or the identity failed
          this.events.emit('warning', { code: 'VM_DISK_GROW_FAILED', vmId: state.vmId, message: `VM ${state.vmId}: its disk did not grow to ${diskMb} MiB: ${error.message}` });
        },
      );
  }

  /** Resolves when the VM has its identity (its agent's operations wait for that by themselves). */
  whenReady(vmId: string): Promise<void> {
    return this.live.get(vmId)?.ready ?? Promise.reject(new Error(`no live VM ${vmId}`));
  }

  /**
   * The agent of a live VM, also while its link is down: its operations wait for the reconnection (or fail
   * when the link is given up, and the VM with it).
   */
  agent(vmId: string): GuestAgent | null {
    return this.live.get(vmId)?.agent ?? null;
  }

  /** The current agent client of a live VM (connected or not). */
  client(vmId: string): AgentClient | null {
    return this.live.get(vmId)?.link.current ?? null;
  }

  async kill(vmId: string): Promise<void> {
    const entry = this.live.get(vmId);
    if (!entry) return;
    this.forget(vmId);
    await this.flushVolumesOf(entry);
    await entry.link.close();
    await this.options.driver.kill(entry.state.driverId);
  }

  /** What the guest wrote to its volumes is in its page cache until flushed: QEMU's end would lose it. */
  private async flushVolumesOf(entry: LiveEntry): Promise<void> {
    const client = entry.link.current;
    if (!entry.state.volumes || !client?.connected) return;
    await flushVolumes(client, entry.state.volumes).catch((error: Error) =>
      this.events.emit('warning', { code: 'VOLUME_FLUSH_FAILED', message: `VM ${entry.state.vmId}: flushing its volumes failed: ${error.message}`, vmId: entry.state.vmId }),
    );
  }

  /**
   * Ends a VM nobody asked to kill: the listeners hear of it before the kill starts, so that from the moment
   * the VM is no longer live here its end is already being recorded.
   */
  private end(vmId: string, reason: EngineEndReason): void {
    if (!this.live.has(vmId)) return;
    for (const listener of this.endedListeners) listener(vmId, reason);
    void this.kill(vmId).catch((error: Error) => this.events.emit('warning', { code: 'VM_KILL_FAILED', message: `VM ${vmId}: ${error.message}`, vmId }));
  }

  /** A VM's deadline: its before-expiry listeners run (each bounds its own time), then it ends `expired`. */
  private async expire(vmId: string): Promise<void> {
    await Promise.allSettled(this.expiryListeners.map(async (listener) => listener(vmId)));
    this.end(vmId, 'expired');
  }

  onBeforeExpiry(listener: (vmId: string) => Promise<void>): void {
    this.expiryListeners.push(listener);
  }

  liveVmIds(): string[] {
    return [...this.live.keys()];
  }

  async egressTarget(vmId: string): Promise<EgressTarget | null> {
    const entry = this.live.get(vmId);
    const info = entry ? this.options.driver.get(entry.state.driverId) : undefined;
    return info ? this.targetOf(info.cgroupPaths) : null;
  }

  onVmEnded(listener: (vmId: string, reason: EngineEndReason) => void): void {
    this.endedListeners.push(listener);
  }

  /** Idle pooled VMs of a template (the built-in one by default) per `vcpus:memoryMb` variant, for benchmarks and health. */
  poolCounts(template: TemplateImage = this.builtinTemplate()): Record<string, number> {
    const prefix = `${template.hash}:`;
    return Object.fromEntries(
      Object.entries(this.pool.counts())
        .filter(([key]) => key.startsWith(prefix))
        .map(([key, count]) => [key.slice(prefix.length), count]),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort(new Error('the VM engine is shutting down'));
    clearInterval(this.cacheMarks);
    this.deadlines.close();
    await this.starting?.catch(() => {});
    await this.pool.close();
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    const entries = [...this.live.values()];
    // Let go of them first: their exits are this close's doing, not crashes to report.
    this.live.clear();
    this.byDriverId.clear();
    if (this.options.killOnClose) await Promise.allSettled(entries.map((entry) => this.flushVolumesOf(entry)));
    for (const entry of entries) await entry.link.close();
    if (this.options.killOnClose) {
      await Promise.allSettled(entries.map((entry) => this.options.driver.kill(entry.state.driverId)));
      for (const entry of entries) this.states.remove(entry.state.driverId);
    }
    // An empty run root is litter (every data directory has its own); one that still holds VMs is kept for
    // the next start to re-adopt or reap them.
    await fs.promises.rmdir(this.runRoot).catch(() => {});
  }

  private async init(): Promise<SnapshotVariants> {
    const started = Date.now();
    // Assigned before the first await: `recovered()` reads it right after calling start().
    const recovery = this.prepareAndRecover();
    this.recovering = recovery.then(() => undefined);
    this.recovering.catch(() => {}); // awaited by callers of recovered(); start() rejects with the same error
    const { host, image, variants, adopted } = await recovery;
    const builtin = this.builtinTemplate();
    for (const vcpus of this.options.warmVcpuCounts) await variants.ensure(vcpus, this.tierFor(this.options.poolMemoryMb));
    for (const vcpus of this.options.warmVcpuCounts) {
      const key = poolKey(builtin, vcpus, this.options.poolMemoryMb);
      this.poolTemplates.set(key, { template: builtin });
      this.pool.want(key);
    }
    this.events.emit('ready', { host, image, adopted, readyMs: Date.now() - started });
    await this.retainCaches(image, variants);
    return variants;
  }

  /** Host, image and snapshot variants, then re-adoption of what an earlier process left running. */
  private async prepareAndRecover(): Promise<{ host: HostReport; image: GuestImage; variants: SnapshotVariants; adopted: number }> {
    const { driver } = this.options;
    this.events.emit('progress', 'preparing the guest image');
    const image = await this.options.loadImage();
    this.image = image;
    const host = await driver.prepare(image);
    this.host = host;
    this.accelerator = host.accelerator;
    const variants = this.snapshotSet(this.builtinTemplate());
    const adopted = await this.recover();
    return { host, image, variants, adopted };
  }

  private host: HostReport | undefined;
  private image: GuestImage | undefined;
  private accelerator: Accelerator | undefined;
  private cacheMarks: NodeJS.Timeout | undefined;

  /** Marks the image and snapshot set in use (now and hourly), then prunes what nobody used for long. */
  private async retainCaches(image: GuestImage, variants: SnapshotVariants): Promise<void> {
    const inUse = [image.dir, variants.root];
    await markInUse(inUse);
    this.cacheMarks = setInterval(() => void markInUse(inUse), MARK_INTERVAL_MS).unref();
    const maxAgeMs = this.options.cacheRetentionMs;
    if (maxAgeMs <= 0) return;
    // In the background: removing GiBs must not delay the first VM.
    void Promise.all([pruneGuestImages(image, maxAgeMs), pruneSnapshotSets(this.options.snapshotRoot, variants.root, maxAgeMs)]).then(
      ([images, snapshots]) => {
        const removed = [...images, ...snapshots];
        if (removed.length > 0) this.events.emit('progress', `removed ${removed.length} unused cache entries: ${removed.join(', ')}`);
      },
      (error: Error) => this.events.emit('warning', { code: 'CACHE_PRUNE_FAILED', message: `pruning the image and snapshot caches: ${error.message}` }),
    );
  }

  /** Re-adopts VMs an earlier server left running that are still within their lifetime; reaps the rest. */
  private async recover(): Promise<number> {
    const now = Date.now();
    const report = await this.options.driver.recover({
      runRoot: this.runRoot,
      keep: (found) => {
        const state = this.states.read(found.vmId);
        return state !== undefined && state.expiresAtMs > now;
      },
    });
    let adopted = 0;
    for (const info of report.adopted) {
      const state = this.states.read(info.vmId)!;
      try {
        const client = await AgentClient.connect({ socketPath: info.agentSocketPath }, { timeoutMs: 10_000, transferDir: info.transferDir });
        // The earlier server may have died between handing the VM out and giving it its identity.
        const identified = client.agent.vmId === state.vmId;
        const ready = identified ? Promise.resolve() : this.applyIdentity(state.vmId, client, Date.now());
        this.track(state, client, info, ready);
        // The earlier server may have died before the disk grew; growing again is a no-op otherwise.
        if (state.diskMb && state.diskMb > this.image!.diskSizeMb) this.growToQuota(state, state.diskMb, ready);
        adopted += 1;
      } catch (error) {
        this.events.emit('warning', { code: 'ADOPT_FAILED', vmId: state.vmId, message: `could not reconnect to VM ${state.vmId}: ${(error as Error).message}` });
        await this.options.driver.kill(info.vmId).catch(() => {});
      }
    }
    this.states.prune(new Set([...this.byDriverId.keys()]));
    return adopted;
  }

  /**
   * A VM for the warm pool: restored, with the clock and entropy fixed up now (the slow first fix-up after a
   * restore, ~200 ms under TCG), under its driver id as a provisional identity until it is handed out, and
   * warmed (`warm-up.ts`): a first request's code paths already ran in it.
   */
  private async restoreForPool(template: TemplateImage, vcpuCount: VcpuCount, memoryMb: number, templateWarmUp?: WarmPoolRequest['warmUp']): Promise<RestoredVm> {
    await assertHostStorage(this.runRoot, this.options.minFreeDiskMb);
    // Its link stays down until it is handed out: a pooled VM must not reach the network before its owner's rules.
    const vm = await this.restore(template, vcpuCount, memoryMb, [], { linkDown: true });
    try {
      await this.tracked(vm.client.restore({ hostname: vm.info.vmId, vmId: vm.info.vmId, timeoutMs: 15_000 }));
      if (templateWarmUp) {
        const started = performance.now();
        await this.tracked(templateWarmUp(new ClientGuestAgent({ connected: async () => vm.client })));
        this.events.emit('warmed', { driverId: vm.info.vmId, execMs: 0, pythonMs: null, fileMs: 0, templateMs: performance.now() - started });
      } else {
        const warmed = await this.tracked(warmUp(vm.client));
        this.events.emit('warmed', { driverId: vm.info.vmId, ...warmed });
      }
      return vm;
    } catch (error) {
      await this.discard(vm);
      throw error;
    }
  }

  private restore(template: TemplateImage, vcpuCount: VcpuCount, memoryMb: number, volumes: VolumeAttachment[] = [], network: RestoreNetwork = {}): Promise<RestoredVm> {
    return this.tracked(this.restoreUntracked(template, vcpuCount, memoryMb, volumes, network));
  }

  private async restoreUntracked(template: TemplateImage, vcpuCount: VcpuCount, memoryMb: number, volumes: VolumeAttachment[], network: RestoreNetwork): Promise<RestoredVm> {
    await this.start();
    const tier = this.tierFor(memoryMb, template);
    const snapshot = await this.snapshotSet(template).ensure(vcpuCount, tier);
    return this.restoreFrom(snapshot.dir, vcpuCount, Math.max(memoryMb, tier.minMemoryMb), memoryMb, false, volumes, network);
  }

  /** A new VM from a snapshot a user took: the vCPU count and memory are the snapshot's own. */
  private restoreSnapshot(snapshotId: string, vcpuCount: VcpuCount, memoryMb: number, volumes: VolumeAttachment[] = [], network: RestoreNetwork = {}): Promise<RestoredVm> {
    return this.tracked(
      (async () => {
        const dir = this.snapshotDir(snapshotId);
        const info = await this.options.driver.readSnapshot(dir);
        if (!info) throw new AppError('NOT_FOUND', `snapshot ${snapshotId} has no files on node ${this.nodeId}`);
        if (info.vcpuCount !== vcpuCount || memoryMb < info.minMemoryMb || memoryMb > info.bootMemoryMb) {
          throw new AppError('BAD_REQUEST', `snapshot ${snapshotId} is of a VM with ${info.vcpuCount} vCPUs and ${info.minMemoryMb} MiB: a VM started from it has the same`);
        }
        return this.restoreFrom(dir, vcpuCount, memoryMb, memoryMb, false, volumes, network);
      })(),
    );
  }

  /** Restores a new VM from a snapshot directory, within the host's restore slots. */
  private async restoreFrom(snapshotDir: string, vcpuCount: VcpuCount, restoreMemoryMb: number, memoryMb: number, takeDisk = false, volumes: VolumeAttachment[] = [], network: RestoreNetwork = {}): Promise<RestoredVm> {
    const { prepare } = network;
    const driverId = `vm-${randomBytes(8).toString('hex')}`;
    const { agent: client, ...info } = await this.restoreSlot(async () => {
      const started = Date.now();
      const restored = await this.options.driver
        .restore({
        vmId: driverId,
        runDir: path.join(this.runRoot, driverId),
        snapshotDir,
        memoryMb: restoreMemoryMb,
        network: this.options.network,
        timeoutMs: 60_000,
        takeDisk,
        volumes,
        ...(prepare ? { beforeRun: async (cgroupPaths: string[]) => prepare(await this.targetOf(cgroupPaths)) } : {}),
        ...(network.linkDown ? { linkDown: true } : {}),
        })
        .catch((error: unknown) => {
          // The guard fails closed: the user is told why no VM starts, in the API's terms.
          if (error instanceof VmError && error.code === 'VM_NETWORK_UNGUARDED') throw new AppError('NETWORK_GUARD_INACTIVE', error.message);
          throw error;
        });
      this.restoreMsAverage = 0.7 * this.restoreMsAverage + 0.3 * (Date.now() - started);
      return restored;
    });
    return { info, client, vcpuCount, memoryMb };
  }

  /** The built-in template: the guest image loaded at start. */
  private builtinTemplate(): TemplateImage {
    const image = this.image!;
    return { hash: image.hash, kernelPath: image.kernelPath, initrdPath: image.initrdPath, rootfsPath: image.rootfsPath, rootfsFormat: 'raw', kernelArgs: [], diskSizeMb: image.diskSizeMb };
  }

  /** A template's snapshot set, made on first use (its snapshots are built when a VM first needs them). */
  private snapshotSet(template: TemplateImage): SnapshotVariants {
    let set = this.snapshotSets.get(template.hash);
    if (!set) {
      set = new SnapshotVariants({
        driver: this.options.driver,
        image: template,
        accelerator: this.host!.accelerator,
        snapshotKey: this.host!.snapshotKey,
        snapshotRoot: template.snapshotRoot ?? this.options.snapshotRoot,
        runRoot: this.runRoot,
        onProgress: (message) => this.events.emit('progress', message),
      });
      this.snapshotSets.set(template.hash, set);
    }
    return set;
  }

  /** The pool key of an acquisition when the pool keeps such VMs (`keepWarm`, and the built-in template's warm shapes), else undefined. */
  private poolKeyOf(request: Pick<AcquireVmRequest, 'vcpuCount' | 'memoryMb' | 'source'>): string | undefined {
    if (request.source?.kind === 'snapshot' || !this.image) return undefined;
    const key = poolKey(request.source?.image ?? this.builtinTemplate(), request.vcpuCount, request.memoryMb);
    return this.poolTemplates.has(key) ? key : undefined;
  }

  private snapshotDir(snapshotId: string): string {
    return path.join(this.options.captureRoot, 'snapshots', snapshotId);
  }

  private pauseDir(vmId: string): string {
    return path.join(this.options.captureRoot, 'paused', vmId);
  }

  async snapshot(vmId: string, snapshotId: string): Promise<CaptureOutcome> {
    const entry = await this.liveEntry(vmId);
    assertNoVolumes(entry.state);
    const client = await entry.link.connected();
    // A mounted transfer share blocks the migration; transfers wait until the thaw.
    await client.quiesce({ holdMs: CAPTURE_HOLD_MS });
    try {
      await fs.promises.mkdir(path.dirname(this.snapshotDir(snapshotId)), { recursive: true, mode: 0o711 });
      const result = await this.options.driver.captureSnapshot({ vmId: entry.state.driverId, snapshotDir: this.snapshotDir(snapshotId), then: 'run' });
      // From now on the VM's disk builds on this snapshot, as its clones' will.
      return outcomeOf(result, entry.state);
    } finally {
      await client.thaw().catch(() => undefined);
    }
  }

  private volumeRoot(): string {
    return path.join(this.options.captureRoot, 'volumes');
  }

  async createVolume(volumeId: string, sizeMb: number): Promise<void> {
    await assertHostStorage(this.runRoot, this.options.minFreeDiskMb + sizeMb);
    await createVolumeImage(this.volumeRoot(), volumeId, sizeMb, this.options.volumeTools ?? DEFAULT_VOLUME_TOOLS);
  }

  async deleteVolume(volumeId: string): Promise<void> {
    await deleteVolumeImage(this.volumeRoot(), volumeId);
  }

  /** The driver's view of `volumes`, slot `i` holding `volumes[i]`. */
  private async prepareVolumes(volumes: readonly VolumeMount[]): Promise<VolumeAttachment[]> {
    if (volumes.length > Math.min(MAX_VOLUMES_PER_VM, VOLUME_SLOT_COUNT)) throw new AppError('BAD_REQUEST', `a VM mounts at most ${MAX_VOLUMES_PER_VM} volumes`);
    const attachments: VolumeAttachment[] = [];
    for (const [slot, volume] of volumes.entries()) {
      const imagePath = volumeImagePath(this.volumeRoot(), volume.volumeId);
      if (!fs.existsSync(imagePath)) throw new AppError('NOT_FOUND', `volume ${volume.volumeId} has no image on node ${this.nodeId}`);
      attachments.push({ slot, imagePath, readOnly: volume.readOnly });
    }
    return attachments;
  }

  async deleteSnapshot(snapshotId: string): Promise<void> {
    await fs.promises.rm(this.snapshotDir(snapshotId), { recursive: true, force: true });
  }

  async pause(vmId: string): Promise<CaptureOutcome> {
    const entry = await this.liveEntry(vmId);
    assertNoVolumes(entry.state);
    const client = await entry.link.connected();
    await client.quiesce({ holdMs: CAPTURE_HOLD_MS });
    const dir = this.pauseDir(vmId);
    await fs.promises.rm(dir, { recursive: true, force: true });
    await fs.promises.mkdir(path.dirname(dir), { recursive: true, mode: 0o711 });
    // The link must not take QEMU's end for a dropped link (it would reconnect, then report the VM lost).
    await entry.link.close();
    let result: CaptureResult;
    try {
      result = await this.options.driver.captureSnapshot({ vmId: entry.state.driverId, snapshotDir: dir, then: 'stop' });
    } catch (error) {
      // The VM runs on as before: give it a link again (its agent waits for a new host).
      const info = this.options.driver.get(entry.state.driverId);
      const again = info ? await AgentClient.connect({ socketPath: info.agentSocketPath }, { timeoutMs: 30_000, transferDir: info.transferDir }).catch(() => undefined) : undefined;
      if (info && again) {
        this.live.delete(vmId);
        this.track(entry.state, again, info);
        await again.thaw().catch(() => undefined);
      } else {
        this.end(vmId, 'crashed');
      }
      throw error;
    }
    // Paused: no longer live here, and not ended either (no listener hears of it).
    this.forget(vmId);
    return outcomeOf(result, entry.state);
  }

  async resume(request: ResumeVmRequest): Promise<AcquiredVm> {
    return this.tracked(this.resumeUntracked(request));
  }

  private async resumeUntracked(request: ResumeVmRequest): Promise<AcquiredVm> {
    const started = Date.now();
    if (this.closed) throw new Error('the VM engine is shutting down');
    await this.start();
    await assertHostStorage(this.runRoot, this.options.minFreeDiskMb);
    const dir = this.pauseDir(request.vmId);
    const info = await this.options.driver.readSnapshot(dir);
    if (!info) throw new AppError('NOT_FOUND', `VM ${request.vmId} has no paused state on node ${this.nodeId}`);
    const vcpuCount = info.vcpuCount as VcpuCount;
    const vm = await this.restoreFrom(dir, vcpuCount, info.minMemoryMb, info.minMemoryMb, true, [], request.prepareNetwork ? { prepare: request.prepareNetwork } : {});
    // The VM's own disk now lives in its run directory; the rest of the pause is used up (QEMU keeps the memory file mapped).
    await fs.promises.rm(dir, { recursive: true, force: true });
    const now = Date.now();
    const state: PersistedVm = {
      driverId: vm.info.vmId,
      vmId: request.vmId,
      vcpuCount,
      memoryMb: info.minMemoryMb,
      templateId: 'resumed',
      startedAtMs: now,
      expiresAtMs: now + request.lifetimeSeconds * 1000,
      ...(request.diskMb ? { diskMb: request.diskMb } : {}),
    };
    this.states.write(state);
    // The same machine coming back: clock and entropy, but its machine id and boot id stay.
    const identified = this.applyIdentity(request.vmId, vm.client, started, true);
    this.track(state, vm.client, vm.info, identified);
    this.events.emit('acquired', { vmId: request.vmId, fromPool: false, ms: Date.now() - started });
    return { vmId: request.vmId, templateId: state.templateId, ip: this.options.network === 'user' ? '10.0.2.15' : '', startedAt: new Date(now), expiresAt: new Date(state.expiresAtMs), pooled: false };
  }

  /**
   * Builds a template (`template-builds.ts`). Waits for the recovery of an earlier process's VMs first: it reaps
   * every VM of the run root it does not know, and the build VM is one of those.
   */
  buildTemplate(request: TemplateBuildRequest): Promise<BuiltTemplate> {
    return this.tracked(
      (async () => {
        if (this.closed) throw new TemplateBuildError('resolve', 'the VM engine is shutting down');
        const signal = AbortSignal.any([request.signal, this.closing.signal]);
        return buildTemplate(
          {
            driver: this.options.driver,
            runRoot: this.runRoot,
            templatesRoot: this.templatesRoot(),
            network: this.options.network,
            loadOciImage: this.options.loadOciImage,
            beforeBoot: () => this.recovered(),
            warm: async (image, vcpuCount, memoryMb) => {
              await this.start();
              await this.snapshotSet(image).ensure(vcpuCount, this.tierFor(memoryMb));
            },
          },
          { ...request, signal },
        );
      })(),
    );
  }

  keepWarm(request: WarmPoolRequest): void {
    if (!(VCPU_COUNTS as readonly number[]).includes(request.vcpuCount)) throw new Error(`vcpu_count must be one of ${VCPU_COUNTS.join(', ')}`);
    const key = poolKey(request.template, request.vcpuCount, request.memoryMb);
    this.poolTemplates.set(key, { template: request.template, ...(request.warmUp ? { warmUp: request.warmUp } : {}) });
    // The pool restores from the template's snapshot, which needs the engine started (host, snapshot key).
    void this.start().then(
      () => this.pool.want(key, request.size),
      () => undefined, // the start's failure is reported to whoever acquires
    );
  }

  async deleteTemplate(templateId: string): Promise<void> {
    const dir = templateDir(this.templatesRoot(), templateId);
    for (const [hash, set] of this.snapshotSets) if (set.root.startsWith(`${dir}${path.sep}`)) this.snapshotSets.delete(hash);
    await removeTemplateFiles(this.templatesRoot(), templateId);
  }

  private templatesRoot(): string {
    return path.join(this.options.captureRoot, 'templates');
  }

  async discardPause(vmId: string): Promise<void> {
    await fs.promises.rm(this.pauseDir(vmId), { recursive: true, force: true });
  }

  /**
   * A live VM once its identity fix-up is done, or NOT_FOUND. A capture must not start before: closing or
   * stopping the VM under a fix-up in flight would fail it, and a failed fix-up ends the VM.
   */
  private async liveEntry(vmId: string): Promise<LiveEntry> {
    const entry = this.live.get(vmId);
    if (!entry) throw new AppError('NOT_FOUND', `VM ${vmId} is not running on node ${this.nodeId}`);
    await entry.ready.catch(() => undefined);
    if (this.live.get(vmId) !== entry) throw new AppError('NOT_FOUND', `VM ${vmId} ended`);
    return entry;
  }

  /**
   * The snapshots that serve `memoryMb`: the pool's own size has snapshots booted with exactly that much
   * (a restore needs no balloon at all: growing the guest by 256 MiB costs ~0.5 s of its vCPU under TCG);
   * other sizes the smallest balloon tier whose boot memory covers them.
   */
  private tierFor(memoryMb: number, template?: TemplateImage): MemoryTier {
    if (template?.memoryMb !== undefined) {
      if (memoryMb !== template.memoryMb) throw new AppError('BAD_REQUEST', `VMs of this template have ${template.memoryMb} MiB of memory, not ${memoryMb}`);
      return { bootMemoryMb: memoryMb, minMemoryMb: memoryMb };
    }
    const floorMb = this.options.memoryTiers[0]?.minMemoryMb ?? 0;
    if (memoryMb === this.options.poolMemoryMb && memoryMb >= floorMb) return { bootMemoryMb: memoryMb, minMemoryMb: memoryMb };
    const tier = this.options.memoryTiers.find((t) => t.bootMemoryMb >= memoryMb);
    if (!tier) throw new Error(`memory_mb ${memoryMb} is more than the largest tier (${this.options.memoryTiers.at(-1)?.bootMemoryMb} MiB)`);
    return tier;
  }

  private async discard(vm: RestoredVm): Promise<void> {
    await vm.client.close().catch(() => {});
    await this.options.driver.kill(vm.info.vmId).catch(() => {});
  }

  private track(state: PersistedVm, client: AgentClient, paths: Pick<VmInfo, 'agentSocketPath' | 'transferDir'>, ready: Promise<void> = Promise.resolve()): void {
    const { vmId } = state;
    const report = (linkState: 'dropped' | 'restored' | 'lost', message: string) => this.events.emit('agent-link', { vmId, state: linkState, message });
    const link = new AgentLink(client, {
      socketPath: paths.agentSocketPath,
      transferDir: paths.transferDir,
      reconnectTimeoutMs: this.options.agentReconnectTimeoutMs,
      onDropped: (error) => report('dropped', `the agent link of VM ${vmId} dropped${error ? ` (${error.message})` : ''}; reconnecting`),
      onReconnected: (attempts, ms) => report('restored', `the agent link of VM ${vmId} is back after ${ms} ms (${attempts} attempt${attempts === 1 ? '' : 's'})`),
      onLost: (error) => {
        report('lost', `VM ${vmId} is killed: ${error.message}`);
        this.end(vmId, 'agent_lost');
      },
    });
    this.live.set(vmId, { state, link, agent: new ClientGuestAgent(link, ready), ready });
    this.byDriverId.set(state.driverId, vmId);
    this.deadlines.schedule(vmId, new Date(state.expiresAtMs), () => void this.expire(vmId));
  }

  private forget(vmId: string): void {
    const entry = this.live.get(vmId);
    if (!entry) return;
    this.live.delete(vmId);
    this.byDriverId.delete(entry.state.driverId);
    this.deadlines.cancel(vmId);
    this.states.remove(entry.state.driverId);
  }
}

/**
 * How long after the identity fix-up a VM's disk starts to grow to its quota. Under TCG the growth costs the
 * guest ~0.9 s of CPU (0.3 s when warm: an exec, resize2fs, the kernel's online resize), which a first request
 * sent right after creating the session would compete with; two seconds lets it finish first. The guest has
 * ~600 MiB free until then, more than it can write in that time under TCG (~50 MB/s). Under KVM it costs
 * milliseconds and starts at once.
 */
const DISK_GROWTH_DELAY_MS: Record<Accelerator, number> = { tcg: 2000, kvm: 0 };

function poolKey(template: TemplateImage, vcpuCount: number, memoryMb: number): string {
  return `${template.hash}:${vcpuCount}:${memoryMb}`;
}

/**
 * A capture would hold the volumes' filesystems in its memory (page cache, open files, the kernel's idea of
 * the disk) while the images go on changing: a restore of it would corrupt them.
 */
function assertNoVolumes(state: PersistedVm): void {
  if (state.volumes?.length) throw new AppError('CONFLICT', `VM ${state.vmId} has volumes mounted: a VM with volumes cannot be snapshotted, cloned or paused`);
}

/** What a capture made, in the core's terms. */
function outcomeOf(result: CaptureResult, state: PersistedVm): CaptureOutcome {
  return {
    pausedMs: result.pausedMs,
    durationMs: result.durationMs,
    memoryBytes: result.memoryBytes,
    diskBytes: result.diskBytes,
    stateBytes: result.stateBytes,
    vcpuCount: result.vcpuCount,
    memoryMb: result.minMemoryMb,
    diskSizeMb: Math.max(state.diskMb ?? 0, Math.round(result.diskSizeBytes / 2 ** 20)),
  };
}
