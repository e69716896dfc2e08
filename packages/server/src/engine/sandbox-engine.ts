/**
 * The VM engine: the core's `VmEngine` over any `VmDriver`. It restores VMs from per-vCPU snapshots
 * (keeping a warm pool of restored, idle VMs for near-instant acquisition), gives each its identity and
 * fresh entropy, kills it at its deadline, reports crashes, and after a server restart re-adopts the VMs
 * that are still within their lifetime. It starts lazily: the first acquire (or `start()`) prepares the
 * host, the image and the snapshots.
 *
 * This class tracks the live VMs (agent links, deadlines, persisted state) and their ends, and composes the
 * parts along `VmEngine`'s seams over one `EngineKit` (engine-kit.ts): restores.ts (snapshot sets and restores),
 * acquisition.ts (acquire, the warm pool, identity and disk growth), capture.ts (snapshot, pause, resume) and
 * recovery.ts (start, re-adoption, the image and snapshot caches).
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentClient } from '../agent/index.ts';
import { AppError } from '../core/errors.ts';
import {
  TemplateBuildError,
  type AcquiredVm,
  type AcquireEstimate,
  type AcquireVmRequest,
  type BuiltTemplate,
  type CaptureOutcome,
  type CaptureOwner,
  type ClusterStorage,
  type DefaultTemplateState,
  type EgressTarget,
  type EngineEndReason,
  type GuestAgent,
  type ResumeVmRequest,
  type TemplateBuildRequest,
  type TemplateImage,
  type VmEngine,
  type WarmPoolRequest,
} from '../core/vm-engine.ts';
import type { VmInfo } from '../vm/vm-driver.ts';
import { EngineAcquisition } from './acquisition.ts';
import { EngineArtifacts } from './artifacts.ts';
import { AgentLink } from './agent-link.ts';
import { EngineCapture } from './capture.ts';
import { DeadlineScheduler } from './deadline-scheduler.ts';
import { assertHostStorage } from './disk-quota.ts';
import { volumeRootOf, type EngineKit, type LiveEntry, type PreparedHost, type SandboxEngineEvents, type SandboxEngineOptions } from './engine-kit.ts';
import { ClientGuestAgent } from './guest-agent.ts';
import { EngineRecovery } from './recovery.ts';
import { Restores } from './restores.ts';
import type { SnapshotVariants } from './snapshot-variants.ts';
import { buildTemplate, removeTemplateFiles, templateDir } from './template-builds.ts';
import { VmStateStore, type PersistedVm } from './vm-state-store.ts';
import { createVolumeImage, DEFAULT_VOLUME_TOOLS, deleteVolumeImage, flushVolumes } from './volumes.ts';

export type { SandboxEngineEvents, SandboxEngineOptions } from './engine-kit.ts';

export class SandboxEngine implements VmEngine {
  readonly events = new EventEmitter<SandboxEngineEvents>();
  readonly nodeId: string;
  private readonly live = new Map<string, LiveEntry>();
  private readonly byDriverId = new Map<string, string>();
  private readonly deadlines = new DeadlineScheduler();
  private readonly states: VmStateStore;
  private readonly endedListeners: ((vmId: string, reason: EngineEndReason) => void)[] = [];
  private readonly expiryListeners: ((vmId: string) => Promise<void>)[] = [];
  private readonly runRoot: string;
  private isClosed = false;
  /** Aborted by close(): template builds in flight stop (their build VMs are killed). */
  private readonly closer = new AbortController();
  /** Restores under way: close() waits for them, so no VM comes up after the engine closed. */
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly restores: Restores;
  private readonly acquisition: EngineAcquisition;
  private readonly capture: EngineCapture;
  private readonly recovery: EngineRecovery;
  private readonly artifacts: EngineArtifacts | null;

  constructor(private readonly options: SandboxEngineOptions) {
    this.nodeId = options.nodeId;
    this.runRoot = options.runRoot;
    fs.mkdirSync(this.runRoot, { recursive: true, mode: 0o711 });
    this.states = new VmStateStore(options.stateDir);
    this.artifacts = options.artifacts
      ? new EngineArtifacts({
          ...options.artifacts,
          driver: options.driver,
          nodeId: options.nodeId,
          captureRoot: options.captureRoot,
          snapshotRoot: options.snapshotRoot,
          stateDir: options.stateDir,
          onProgress: (message) => this.events.emit('progress', message),
          onWarning: (message) => this.events.emit('warning', { code: 'ARTIFACT_UPLOAD_FAILED', message }),
          onRemoved: (dir) => this.restores.forgetSnapshotSetsUnder(dir),
        })
      : null;
    const kit = this.kit();
    this.restores = new Restores(kit);
    this.acquisition = new EngineAcquisition(kit, this.restores);
    this.capture = new EngineCapture(kit, this.restores, this.acquisition);
    this.recovery = new EngineRecovery(kit, this.restores, this.acquisition);
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

  /** What the parts share with the engine (see `EngineKit`), without widening its public face. */
  private kit(): EngineKit {
    // Read when asked: the engine closes later.
    const isClosed = () => this.isClosed;
    let prepared: PreparedHost | undefined;
    return {
      options: this.options,
      events: this.events,
      nodeId: this.nodeId,
      runRoot: this.runRoot,
      states: this.states,
      artifacts: this.artifacts,
      get closed() {
        return isClosed();
      },
      get prepared() {
        return prepared;
      },
      set prepared(host) {
        prepared = host;
      },
      start: () => this.start(),
      tracked: (work) => this.tracked(work),
      track: (state, client, paths, ready) => this.track(state, client, paths, ready),
      relink: (state, client, paths) => {
        this.live.delete(state.vmId);
        this.track(state, client, paths);
      },
      forget: (vmId) => this.forget(vmId),
      entry: (vmId) => this.live.get(vmId),
      liveEntry: (vmId) => this.liveEntry(vmId),
      end: (vmId, reason) => this.end(vmId, reason),
      kill: (vmId) => this.kill(vmId),
      trackedDriverIds: () => [...this.byDriverId.keys()],
    };
  }

  /** Prepares everything a first acquire needs (host checks, image, snapshots, re-adoption, pool). */
  start(): Promise<SnapshotVariants> {
    return this.recovery.start();
  }

  recovered(): Promise<void> {
    return this.recovery.recovered();
  }

  defaultTemplateState(): DefaultTemplateState {
    return this.recovery.state;
  }

  acquire(request: AcquireVmRequest): Promise<AcquiredVm> {
    return this.acquisition.acquire(request);
  }

  estimateAcquire(request: Pick<AcquireVmRequest, 'vcpuCount' | 'memoryMb' | 'source'>): AcquireEstimate {
    return this.acquisition.estimateAcquire(request);
  }

  keepWarm(request: WarmPoolRequest): void {
    this.acquisition.keepWarm(request);
  }

  /** Idle pooled VMs of a template (the built-in one by default) per `vcpus:memoryMb` variant, for benchmarks and health. */
  poolCounts(template?: TemplateImage): Record<string, number> {
    return this.acquisition.poolCounts(template);
  }

  get portableCaptures(): boolean {
    return this.artifacts !== null;
  }

  get storage(): ClusterStorage | null {
    return this.artifacts;
  }

  snapshot(vmId: string, snapshotId: string, owner?: CaptureOwner): Promise<CaptureOutcome> {
    return this.capture.snapshot(vmId, snapshotId, owner);
  }

  deleteSnapshot(snapshotId: string): Promise<void> {
    return this.capture.deleteSnapshot(snapshotId);
  }

  pause(vmId: string, owner?: CaptureOwner): Promise<CaptureOutcome> {
    return this.capture.pause(vmId, owner);
  }

  resume(request: ResumeVmRequest): Promise<AcquiredVm> {
    return this.capture.resume(request);
  }

  discardPause(vmId: string): Promise<void> {
    return this.capture.discardPause(vmId);
  }

  /** Registers work that close() must wait for. */
  private tracked<T>(work: Promise<T>): Promise<T> {
    this.inflight.add(work);
    const done = () => this.inflight.delete(work);
    void work.then(done, done);
    return work;
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

  setDeadline(vmId: string, expiresAt: Date): boolean {
    const entry = this.live.get(vmId);
    if (!entry) return false;
    entry.state = { ...entry.state, expiresAtMs: expiresAt.getTime() };
    // Persisted first: a server restarted after this answer re-schedules the new deadline, not the old one.
    this.states.write(entry.state);
    this.deadlines.schedule(vmId, expiresAt, () => void this.expire(vmId));
    return true;
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
      this.events.emit('warning', {
        code: 'VOLUME_FLUSH_FAILED',
        message: `VM ${entry.state.vmId}: flushing its volumes failed: ${error.message}`,
        vmId: entry.state.vmId,
      }),
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
    return info ? this.restores.targetOf(info.cgroupPaths) : null;
  }

  onVmEnded(listener: (vmId: string, reason: EngineEndReason) => void): void {
    this.endedListeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.closer.abort(new Error('the VM engine is shutting down'));
    this.recovery.close();
    this.deadlines.close();
    await this.recovery.startedOnce?.catch(() => {});
    await this.acquisition.closePool();
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

  async createVolume(volumeId: string, sizeMb: number): Promise<void> {
    await assertHostStorage(this.runRoot, this.options.minFreeDiskMb + sizeMb);
    await createVolumeImage(volumeRootOf(this.options), volumeId, sizeMb, this.options.volumeTools ?? DEFAULT_VOLUME_TOOLS);
  }

  async publishVolume(volumeId: string, owner: CaptureOwner): Promise<void> {
    if (!this.artifacts) throw new Error('volumes stay on their node here (SANDBOXD_ARTIFACTS is off)');
    await this.artifacts.publishVolume(volumeId, owner);
  }

  async fetchVolume(volumeId: string): Promise<void> {
    if (!this.artifacts) throw new Error('volumes stay on their node here (SANDBOXD_ARTIFACTS is off)');
    await this.artifacts.fetchVolume(volumeId);
  }

  async deleteVolume(volumeId: string): Promise<void> {
    await deleteVolumeImage(volumeRootOf(this.options), volumeId);
    await this.artifacts?.remove({ kind: 'volume', id: volumeId });
  }

  /**
   * Builds a template (`template-builds.ts`). Waits for the recovery of an earlier process's VMs first: it reaps
   * every VM of the run root it does not know, and the build VM is one of those.
   */
  buildTemplate(request: TemplateBuildRequest): Promise<BuiltTemplate> {
    return this.tracked(
      (async () => {
        if (this.isClosed) throw new TemplateBuildError('resolve', 'the VM engine is shutting down');
        const signal = AbortSignal.any([request.signal, this.closer.signal]);
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
              await this.restores.snapshotSet(image).ensure(vcpuCount, this.restores.tierFor(memoryMb));
            },
            ...(this.artifacts
              ? {
                  publish: async (image: TemplateImage, baseRootfsPath: string, owner: { userId: number }) => {
                    await this.artifacts!.markTemplate(request.templateId, image.rootfsPath, baseRootfsPath);
                    await this.artifacts!.publishTemplate(request.templateId, owner);
                  },
                }
              : {}),
          },
          { ...request, signal },
        );
      })(),
    );
  }

  async deleteTemplate(templateId: string): Promise<void> {
    const dir = templateDir(this.templatesRoot(), templateId);
    this.restores.forgetSnapshotSetsUnder(dir);
    await removeTemplateFiles(this.templatesRoot(), templateId);
    await this.artifacts?.removeTemplate(templateId);
  }

  private templatesRoot(): string {
    return path.join(this.options.captureRoot, 'templates');
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

  private track(
    state: PersistedVm,
    client: AgentClient,
    paths: Pick<VmInfo, 'agentSocketPath' | 'transferDir'>,
    ready: Promise<void> = Promise.resolve(),
  ): void {
    const { vmId } = state;
    const report = (linkState: 'dropped' | 'restored' | 'lost', message: string) => this.events.emit('agent-link', { vmId, state: linkState, message });
    const link = new AgentLink(client, {
      socketPath: paths.agentSocketPath,
      transferDir: paths.transferDir,
      reconnectTimeoutMs: this.options.agentReconnectTimeoutMs,
      onDropped: (error) => report('dropped', `the agent link of VM ${vmId} dropped${error ? ` (${error.message})` : ''}; reconnecting`),
      onReconnected: (attempts, ms) =>
        report('restored', `the agent link of VM ${vmId} is back after ${ms} ms (${attempts} attempt${attempts === 1 ? '' : 's'})`),
      onLost: (error) => {
        report('lost', `VM ${vmId} is killed: ${error.message}`);
        this.end(vmId, 'agent_lost');
      },
    });
    const agent = new ClientGuestAgent(link, ready, (call, ms, ok) => this.events.emit('agent-call', { call, ms, ok }));
    this.live.set(vmId, { state, link, agent, ready });
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
