/**
 * Acquisition: a VM handed out to the core, from the warm pool when it holds one of the asked shape (its link
 * raised only once its owner's egress rules are in place), else restored for the purpose; with its volumes
 * mounted, its identity applied in the background (its agent holds every operation until then) and its disk grown
 * to its quota afterwards. The warm pool keeps restored, identified and warmed VMs per template and shape.
 */
import fs from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import type { AgentClient } from '../agent/index.ts';
import { AppError } from '../core/errors.ts';
import { inSpan } from '../observability/spans.ts';
import {
  MAX_VOLUMES_PER_VM,
  type AcquiredVm,
  type AcquireEstimate,
  type AcquireVmRequest,
  type TemplateImage,
  type VolumeMount,
  type WarmPoolRequest,
} from '../core/vm-engine.ts';
import { VCPU_COUNTS, VOLUME_SLOT_COUNT, type Accelerator, type VcpuCount, type VolumeAttachment } from '../vm/vm-driver.ts';
import { assertHostStorage, growRootFilesystem } from './disk-quota.ts';
import { hostMemoryAbove } from './host-memory.ts';
import { volumeRootOf, type EngineKit, type RestoredVm, type RestoreNetwork } from './engine-kit.ts';
import { ClientGuestAgent } from './guest-agent.ts';
import type { Restores } from './restores.ts';
import { variantOf } from './snapshot-variants.ts';
import type { PersistedVm } from './vm-state-store.ts';
import { WarmPool } from './warm-pool.ts';
import { warmUp } from './warm-up.ts';
import { mountVolumes, volumeImagePath } from './volumes.ts';

/**
 * How long after the identity fix-up a VM's disk starts to grow to its quota. Under TCG the growth costs the
 * guest ~0.9 s of CPU (0.3 s when warm: an exec, resize2fs, the kernel's online resize), which a first request
 * sent right after creating the session would compete with; two seconds lets it finish first. The guest has
 * ~600 MiB free until then, more than it can write in that time under TCG (~50 MB/s). Under KVM it costs
 * milliseconds and starts at once.
 */
const DISK_GROWTH_DELAY_MS: Record<Accelerator, number> = { tcg: 2000, kvm: 0 };
/**
 * Disk growths under way at once, across the engine. Each is ~0.9 s of guest CPU under TCG; twenty sessions
 * created in one burst all growing at once took 18 s of CPU from the two cores their first requests needed (in
 * the 20-at-once test, 8 of 20 executes did not answer within 60 s). One at a time, they take at most one core.
 */
const CONCURRENT_DISK_GROWTHS = 1;

export class EngineAcquisition {
  private readonly pool: WarmPool<string, RestoredVm>;
  private readonly diskGrowthSlot = pLimit(CONCURRENT_DISK_GROWTHS);
  /** The templates of the pool's keys and their warm-ups (only those kept warm are taken from the pool). */
  private readonly poolTemplates = new Map<string, { template: TemplateImage; warmUp?: WarmPoolRequest['warmUp'] }>();

  constructor(
    private readonly kit: EngineKit,
    private readonly restores: Restores,
  ) {
    this.pool = new WarmPool<string, RestoredVm>({
      size: kit.options.poolSize,
      max: kit.options.poolMax ?? kit.options.poolSize,
      roomForMore: () => this.hostIdle(),
      create: (key) => {
        const [, vcpus, memory] = key.split(':');
        const { template, warmUp: templateWarmUp } = this.poolTemplates.get(key)!;
        return this.restoreForPool(template, Number(vcpus) as VcpuCount, Number(memory), templateWarmUp);
      },
      destroy: (vm) => this.restores.discard(vm),
      onError: (key, error) => this.kit.events.emit('warning', { code: 'POOL_REFILL_FAILED', message: `warm pool ${key}: ${(error as Error).message}` }),
    });
  }

  /** Keeps the built-in template's VMs of each warm shape in the pool (once the engine is prepared). */
  keepBuiltinWarm(): void {
    const builtin = this.restores.builtinTemplate();
    for (const vcpus of this.kit.options.warmVcpuCounts) {
      const key = poolKey(builtin, vcpus, this.kit.options.poolMemoryMb);
      this.poolTemplates.set(key, { template: builtin });
      this.pool.want(key);
    }
  }

  /** Empties the pool (its VMs are killed). */
  closePool(): Promise<void> {
    return this.pool.close();
  }

  /** In a span `engine.acquire` (with `sandboxd.vm.from_pool` once known): the pool's take or a restore. */
  acquire(request: AcquireVmRequest): Promise<AcquiredVm> {
    const attributes = { 'sandboxd.vm.id': request.vmId, 'sandboxd.vm.vcpus': request.vcpuCount, 'sandboxd.vm.memory_mb': request.memoryMb };
    return this.kit.tracked(
      inSpan('engine.acquire', { attributes }, async (span) => {
        const vm = await this.acquireUntracked(request);
        span.setAttribute('sandboxd.vm.from_pool', vm.pooled);
        return vm;
      }),
    );
  }

  estimateAcquire(request: Pick<AcquireVmRequest, 'vcpuCount' | 'memoryMb' | 'source'>): AcquireEstimate {
    if (this.pooledFor(request)) return { pooled: true, position: 0, waitMs: 0 };
    return this.restores.queueEstimate();
  }

  /** Whether the pool holds a VM for `request` now. */
  private pooledFor(request: Pick<AcquireVmRequest, 'vcpuCount' | 'memoryMb' | 'source' | 'volumes'>): boolean {
    const key = (request.volumes?.length ?? 0) === 0 || this.attachesVolumes() ? this.poolKeyOf(request) : undefined;
    return key !== undefined && (this.pool.counts()[key] ?? 0) > 0;
  }

  /**
   * Whether the pool may grow above its floor now: no caller is waiting for a restore, the host's CPUs are not
   * busy (1-minute load below the CPU count) and its memory is above the floor. Growing the pool is for the next
   * burst, never at the cost of this one.
   */
  private hostIdle(): boolean {
    const queue = this.restores.queueEstimate();
    return queue.position === 0 && os.loadavg()[0]! < os.availableParallelism() && hostMemoryAbove(this.kit.options.minFreeMemoryMb ?? 0);
  }

  private async acquireUntracked(request: AcquireVmRequest): Promise<AcquiredVm> {
    const started = Date.now();
    if (!(VCPU_COUNTS as readonly number[]).includes(request.vcpuCount)) throw new Error(`vcpu_count must be one of ${VCPU_COUNTS.join(', ')}`);
    const vcpuCount = request.vcpuCount as VcpuCount;
    if (this.kit.closed) throw new Error('the VM engine is shutting down');
    await this.kit.start();
    await assertHostStorage(this.kit.runRoot, this.kit.options.minFreeDiskMb);
    const source = request.source ?? { kind: 'template' };
    let vm: RestoredVm;
    let pooled: RestoredVm | undefined;
    let baseDiskMb: number;
    let templateId: string;
    const volumes = request.volumes ?? [];
    const attachments = await this.prepareVolumes(volumes);
    const network: RestoreNetwork = request.prepareNetwork ? { prepare: request.prepareNetwork } : {};
    if (source.kind === 'snapshot') {
      vm = await this.restores.restoreSnapshot(source.snapshotId, vcpuCount, request.memoryMb, attachments, network);
      baseDiskMb = source.diskSizeMb;
      templateId = source.snapshotId;
    } else {
      const template = source.image ?? this.restores.builtinTemplate();
      // The pool's VMs have empty volume slots: the driver swaps the images in (`attachVolumes`) if it can, else
      // a VM is restored with them.
      const key = volumes.length === 0 || this.attachesVolumes() ? this.poolKeyOf(request) : undefined;
      pooled = key ? this.pool.take(key) : undefined;
      if (pooled && pooled.client.connected) pooled = (await this.releaseLink(pooled, request.prepareNetwork)) ? pooled : undefined;
      if (pooled && pooled.client.connected && attachments.length > 0) pooled = (await this.attachToPooled(pooled, attachments)) ? pooled : undefined;
      vm = pooled && pooled.client.connected ? pooled : await this.restores.restore(template, vcpuCount, request.memoryMb, attachments, network);
      if (pooled && vm !== pooled) void this.restores.discard(pooled);
      baseDiskMb = template.diskSizeMb;
      templateId = variantOf(vcpuCount);
    }
    const diskMb = Math.max(request.diskMb ?? baseDiskMb, baseDiskMb);
    if (this.kit.closed) {
      await this.restores.discard(vm);
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
    this.kit.states.write(state);
    const identified = this.applyIdentity(request.vmId, vm.client, started);
    this.kit.track(state, vm.client, vm.info, identified);
    if (volumes.length > 0) {
      // Handed out with its volumes mounted, or not at all.
      try {
        await identified;
        await mountVolumes(vm.client, volumes);
      } catch (error) {
        await this.kit.kill(request.vmId);
        throw error;
      }
    }
    if (diskMb > baseDiskMb) this.growToQuota(state, diskMb, identified);
    this.kit.events.emit('acquired', { vmId: request.vmId, fromPool: vm === pooled, ms: Date.now() - started });
    return {
      vmId: request.vmId,
      templateId: state.templateId,
      ip: this.kit.options.network === 'user' ? '10.0.2.15' : '',
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
      await prepare?.(await this.restores.targetOf(vm.info.cgroupPaths));
    } catch (error) {
      await this.restores.discard(vm);
      throw error;
    }
    try {
      await this.kit.options.driver.setLink(vm.info.vmId, true);
      return true;
    } catch {
      await this.restores.discard(vm);
      return false;
    }
  }

  /**
   * Gives a handed-out VM its identity (hostname, VM id) with a fresh clock and entropy, while the caller goes
   * on: the VM's agent holds every operation until it is done, so nothing sees the VM without it. A pooled VM
   * had its clock and entropy set when it entered the pool, which makes this call the cheap one. A VM whose
   * fix-up fails is killed and reported as crashed.
   */
  applyIdentity(vmId: string, client: AgentClient, startedMs: number, keepIdentity = false): Promise<void> {
    const identity = client.restore({ hostname: vmId, vmId, keepIdentity, timeoutMs: 15_000 }).then(() => {
      this.kit.events.emit('identified', { vmId, ms: Date.now() - startedMs });
    });
    identity.catch((error: unknown) => {
      if (!this.kit.entry(vmId)) return; // killed meanwhile
      this.kit.events.emit('warning', { code: 'VM_IDENTITY_FAILED', message: `VM ${vmId}: the identity fix-up failed: ${(error as Error).message}`, vmId });
      this.kit.end(vmId, 'crashed');
    });
    return identity;
  }

  /**
   * Grows the VM's disk to its quota once its identity is set, in the background (see `disk-quota.ts`). A
   * failure leaves the VM running on the image's smaller disk and is reported as a warning.
   */
  growToQuota(state: PersistedVm, diskMb: number, identified: Promise<void>): void {
    const started = Date.now();
    const current = () => this.kit.entry(state.vmId)?.state === state;
    void identified
      .then(() => sleep(DISK_GROWTH_DELAY_MS[this.kit.prepared?.accelerator ?? 'tcg']))
      .then(() => {
        const entry = this.kit.entry(state.vmId);
        if (!entry || entry.state !== state) throw new Error('the VM ended');
        // Through the link: a dropped link that reconnected has a new client.
        return entry.link.connected();
      })
      .then((client) =>
        this.diskGrowthSlot(() => {
          if (!current()) throw new Error('the VM ended');
          return growRootFilesystem(this.kit.options.driver, state.driverId, client, diskMb);
        }),
      )
      .then(
        () => this.kit.events.emit('diskGrown', { vmId: state.vmId, diskMb, ms: Date.now() - started }),
        (error: Error) => {
          if (!current()) return; // killed meanwhile, or the identity failed
          this.kit.events.emit('warning', {
            code: 'VM_DISK_GROW_FAILED',
            vmId: state.vmId,
            message: `VM ${state.vmId}: its disk did not grow to ${diskMb} MiB: ${error.message}`,
          });
        },
      );
  }

  /**
   * A VM for the warm pool: restored, with the clock and entropy fixed up now (the slow first fix-up after a
   * restore, ~200 ms under TCG), under its driver id as a provisional identity until it is handed out, and
   * warmed (`warm-up.ts`): a first request's code paths already ran in it.
   */
  private async restoreForPool(
    template: TemplateImage,
    vcpuCount: VcpuCount,
    memoryMb: number,
    templateWarmUp?: WarmPoolRequest['warmUp'],
  ): Promise<RestoredVm> {
    await assertHostStorage(this.kit.runRoot, this.kit.options.minFreeDiskMb);
    // Its link stays down until it is handed out: a pooled VM must not reach the network before its owner's rules.
    const vm = await this.restores.restore(template, vcpuCount, memoryMb, [], { linkDown: true });
    try {
      await this.kit.tracked(vm.client.restore({ hostname: vm.info.vmId, vmId: vm.info.vmId, timeoutMs: 15_000 }));
      if (templateWarmUp) {
        const started = performance.now();
        await this.kit.tracked(templateWarmUp(new ClientGuestAgent({ connected: async () => vm.client })));
        this.kit.events.emit('warmed', { driverId: vm.info.vmId, execMs: 0, pythonMs: null, fileMs: 0, templateMs: performance.now() - started });
      } else {
        const warmed = await this.kit.tracked(warmUp(vm.client));
        this.kit.events.emit('warmed', { driverId: vm.info.vmId, ...warmed });
      }
      return vm;
    } catch (error) {
      await this.restores.discard(vm);
      throw error;
    }
  }

  /** The pool key of an acquisition when the pool keeps such VMs (`keepWarm`, and the built-in template's warm shapes), else undefined. */
  private poolKeyOf(request: Pick<AcquireVmRequest, 'vcpuCount' | 'memoryMb' | 'source'>): string | undefined {
    if (request.source?.kind === 'snapshot' || !this.kit.prepared) return undefined;
    const key = poolKey(request.source?.image ?? this.restores.builtinTemplate(), request.vcpuCount, request.memoryMb);
    return this.poolTemplates.has(key) ? key : undefined;
  }

  /** Whether the driver puts volumes in a running VM's slots (so a VM with volumes may come from the pool). */
  private attachesVolumes(): boolean {
    return this.kit.options.driver.attachVolumes !== undefined;
  }

  /**
   * Puts the volumes in a pooled VM's empty slots. False (the VM discarded, a warning emitted) when the driver
   * fails: the caller restores a VM with them instead.
   */
  private async attachToPooled(vm: RestoredVm, attachments: VolumeAttachment[]): Promise<boolean> {
    try {
      await this.kit.options.driver.attachVolumes!(vm.info.vmId, attachments);
      return true;
    } catch (error) {
      this.kit.events.emit('warning', {
        code: 'VOLUME_ATTACH_FAILED',
        message: `attaching volumes to pooled VM ${vm.info.vmId} failed: ${(error as Error).message}`,
      });
      void this.restores.discard(vm);
      return false;
    }
  }

  /** The driver's view of `volumes`, slot `i` holding `volumes[i]`. */
  async prepareVolumes(volumes: readonly VolumeMount[]): Promise<VolumeAttachment[]> {
    if (volumes.length > Math.min(MAX_VOLUMES_PER_VM, VOLUME_SLOT_COUNT))
      throw new AppError('BAD_REQUEST', `a VM mounts at most ${MAX_VOLUMES_PER_VM} volumes`);
    const attachments: VolumeAttachment[] = [];
    for (const [slot, volume] of volumes.entries()) {
      const imagePath = volumeImagePath(volumeRootOf(this.kit.options), volume.volumeId);
      if (!fs.existsSync(imagePath)) throw new AppError('NOT_FOUND', `volume ${volume.volumeId} has no image on node ${this.kit.nodeId}`);
      attachments.push({ slot, imagePath, readOnly: volume.readOnly });
    }
    return attachments;
  }

  keepWarm(request: WarmPoolRequest): void {
    if (!(VCPU_COUNTS as readonly number[]).includes(request.vcpuCount)) throw new Error(`vcpu_count must be one of ${VCPU_COUNTS.join(', ')}`);
    const key = poolKey(request.template, request.vcpuCount, request.memoryMb);
    this.poolTemplates.set(key, { template: request.template, ...(request.warmUp ? { warmUp: request.warmUp } : {}) });
    // The pool restores from the template's snapshot, which needs the engine started (host, snapshot key).
    void this.kit.start().then(
      () => this.pool.want(key, request.size),
      () => undefined, // the start's failure is reported to whoever acquires
    );
  }

  /** Idle pooled VMs of a template (the built-in one by default) per `vcpus:memoryMb` variant, for benchmarks and health. */
  poolCounts(template: TemplateImage = this.restores.builtinTemplate()): Record<string, number> {
    const prefix = `${template.hash}:`;
    return Object.fromEntries(
      Object.entries(this.pool.counts())
        .filter(([key]) => key.startsWith(prefix))
        .map(([key, count]) => [key.slice(prefix.length), count]),
    );
  }
}

function poolKey(template: TemplateImage, vcpuCount: number, memoryMb: number): string {
  return `${template.hash}:${vcpuCount}:${memoryMb}`;
}
