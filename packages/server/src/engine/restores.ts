/**
 * Restores: every VM the engine hands out (or keeps in its pool, or resumes) is a QEMU restored from a snapshot
 * directory, within the host's restore slots. This part keeps the templates' snapshot sets (made per vCPU count and
 * memory tier on first use), picks the tier for a memory size, and measures how long a restore takes (what a
 * queued acquisition is told to expect).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pLimit, { type LimitFunction } from 'p-limit';
import { AppError } from '../core/errors.ts';
import type { AcquireEstimate, EgressTarget, TemplateImage } from '../core/vm-engine.ts';
import { cgroup2Mounts, classifierOf } from '../net/egress/cgroup-classifier.ts';
import { VmError } from '../vm/vm-errors.ts';
import type { VcpuCount, VolumeAttachment } from '../vm/vm-driver.ts';
import type { EngineKit, RestoredVm, RestoreNetwork } from './engine-kit.ts';
import { assertHostMemory } from './host-memory.ts';
import { SnapshotVariants, type MemoryTier } from './snapshot-variants.ts';

export class Restores {
  /** Each template's snapshot set, by the template's hash. */
  private readonly snapshotSets = new Map<string, SnapshotVariants>();
  private readonly restoreSlot: LimitFunction;
  /**
   * Moving average of how long a restore takes once it has its slot (until its agent answers); what a queued
   * acquisition is told to expect. Starts at a TCG-sized guess until the first restore is measured.
   */
  private restoreMsAverage = 1500;

  constructor(private readonly kit: EngineKit) {
    const { maxConcurrentRestores } = kit.options;
    this.restoreSlot = pLimit(maxConcurrentRestores > 0 ? maxConcurrentRestores : Number.POSITIVE_INFINITY);
  }

  /** How soon a restore asked for now would be done: the restores ahead of it, the slots, the average time. */
  queueEstimate(): AcquireEstimate {
    const slots = this.restoreSlot.concurrency;
    const ahead = this.restoreSlot.activeCount + this.restoreSlot.pendingCount;
    // This restore starts once `ahead - slots + 1` of those ahead have finished; they finish `slots` at a time.
    const rounds = Number.isFinite(slots) ? Math.floor(ahead / slots) + 1 : 1;
    return { pooled: false, position: ahead, waitMs: Math.round(rounds * this.restoreMsAverage) };
  }

  /** Forgets the snapshot sets kept under `dir` (a deleted template's). */
  forgetSnapshotSetsUnder(dir: string): void {
    for (const [hash, set] of this.snapshotSets) if (set.root.startsWith(`${dir}${path.sep}`)) this.snapshotSets.delete(hash);
  }

  /** How the egress firewall recognises a hypervisor in `cgroupPaths`, or null when it cannot. */
  async targetOf(cgroupPaths: readonly string[]): Promise<EgressTarget | null> {
    const mounts = await cgroup2Mounts();
    for (const dir of cgroupPaths) {
      const target = classifierOf(dir, mounts);
      if (target) return target;
    }
    return null;
  }

  /** The built-in template: the guest image loaded at start. */
  builtinTemplate(): TemplateImage {
    const image = this.kit.prepared!.image;
    return {
      hash: image.hash,
      kernelPath: image.kernelPath,
      initrdPath: image.initrdPath,
      rootfsPath: image.rootfsPath,
      rootfsFormat: 'raw',
      kernelArgs: [],
      diskSizeMb: image.diskSizeMb,
    };
  }

  /** A template's snapshot set, made on first use (its snapshots are built when a VM first needs them). */
  snapshotSet(template: TemplateImage): SnapshotVariants {
    let set = this.snapshotSets.get(template.hash);
    if (!set) {
      const artifacts = this.kit.artifacts;
      // Another node may ask for these files by their content (snapshots made over them name them so).
      for (const file of [template.kernelPath, template.initrdPath, template.rootfsPath]) artifacts?.contents.offer(file);
      set = new SnapshotVariants({
        driver: this.kit.options.driver,
        image: template,
        accelerator: this.kit.prepared!.host.accelerator,
        snapshotKey: this.kit.prepared!.host.snapshotKey,
        snapshotRoot: template.snapshotRoot ?? this.kit.options.snapshotRoot,
        runRoot: this.kit.runRoot,
        onProgress: (message) => this.kit.events.emit('progress', message),
        ...(artifacts
          ? {
              cluster: {
                fetch: async (dir: string) => {
                  const ref = artifacts.locate(path.join(dir, 'disk.qcow2'))?.ref;
                  if (!ref || !(await artifacts.has(ref))) return false;
                  await artifacts.ensureCapture(ref);
                  return true;
                },
                have: (dir: string) => {
                  const ref = artifacts.locate(path.join(dir, 'disk.qcow2'))?.ref;
                  if (ref) artifacts.publishInBackground(ref, { userId: null });
                },
              },
            }
          : {}),
      });
      this.snapshotSets.set(template.hash, set);
    }
    return set;
  }

  /**
   * The snapshots that serve `memoryMb`: the pool's own size has snapshots booted with exactly that much
   * (a restore needs no balloon at all: growing the guest by 256 MiB costs ~0.5 s of its vCPU under TCG);
   * other sizes the smallest balloon tier whose boot memory covers them.
   */
  tierFor(memoryMb: number, template?: TemplateImage): MemoryTier {
    if (template?.memoryMb !== undefined) {
      if (memoryMb !== template.memoryMb) throw new AppError('BAD_REQUEST', `VMs of this template have ${template.memoryMb} MiB of memory, not ${memoryMb}`);
      return { bootMemoryMb: memoryMb, minMemoryMb: memoryMb };
    }
    const floorMb = this.kit.options.memoryTiers[0]?.minMemoryMb ?? 0;
    if (memoryMb === this.kit.options.poolMemoryMb && memoryMb >= floorMb) return { bootMemoryMb: memoryMb, minMemoryMb: memoryMb };
    const tier = this.kit.options.memoryTiers.find((t) => t.bootMemoryMb >= memoryMb);
    if (!tier) throw new Error(`memory_mb ${memoryMb} is more than the largest tier (${this.kit.options.memoryTiers.at(-1)?.bootMemoryMb} MiB)`);
    return tier;
  }

  restore(
    template: TemplateImage,
    vcpuCount: VcpuCount,
    memoryMb: number,
    volumes: VolumeAttachment[] = [],
    network: RestoreNetwork = {},
  ): Promise<RestoredVm> {
    return this.kit.tracked(this.restoreUntracked(template, vcpuCount, memoryMb, volumes, network));
  }

  private async restoreUntracked(
    template: TemplateImage,
    vcpuCount: VcpuCount,
    memoryMb: number,
    volumes: VolumeAttachment[],
    network: RestoreNetwork,
  ): Promise<RestoredVm> {
    await this.kit.start();
    template = await this.localTemplate(template);
    const tier = this.tierFor(memoryMb, template);
    const snapshot = await this.snapshotSet(template).ensure(vcpuCount, tier);
    return this.restoreFrom(snapshot.dir, vcpuCount, Math.max(memoryMb, tier.minMemoryMb), memoryMb, false, volumes, network);
  }

  /** A new VM from a snapshot a user took: the vCPU count and memory are the snapshot's own. */
  restoreSnapshot(
    snapshotId: string,
    vcpuCount: VcpuCount,
    memoryMb: number,
    volumes: VolumeAttachment[] = [],
    network: RestoreNetwork = {},
  ): Promise<RestoredVm> {
    return this.kit.tracked(
      (async () => {
        // Here, or fetched from the cluster's object store (taken on another node, or evicted from this one's cache).
        const dir = this.kit.artifacts ? await this.kit.artifacts.ensureCapture({ kind: 'snapshot', id: snapshotId }) : this.snapshotDir(snapshotId);
        const info = await this.kit.options.driver.readSnapshot(dir);
        if (!info) throw new AppError('NOT_FOUND', `snapshot ${snapshotId} has no files on node ${this.kit.nodeId}`);
        if (info.vcpuCount !== vcpuCount || memoryMb < info.minMemoryMb || memoryMb > info.bootMemoryMb) {
          throw new AppError(
            'BAD_REQUEST',
            `snapshot ${snapshotId} is of a VM with ${info.vcpuCount} vCPUs and ${info.minMemoryMb} MiB: a VM started from it has the same`,
          );
        }
        return this.restoreFrom(dir, vcpuCount, memoryMb, memoryMb, false, volumes, network);
      })(),
    );
  }

  /**
   * A built template's files as this node has them: the record names the paths of the node that built it, and
   * every node keeps its own copy under its capture root (fetched from the cluster's object store when missing).
   */
  async localTemplate(template: TemplateImage): Promise<TemplateImage> {
    const artifacts = this.kit.artifacts;
    if (!artifacts || !template.templateId) return template;
    const dir = artifacts.dirOf({ kind: 'template', id: template.templateId });
    // Built here (its record names this node's files, which are there): nothing to fetch.
    if (template.rootfsPath.startsWith(`${dir}${path.sep}`) && fs.existsSync(template.rootfsPath)) return template;
    await artifacts.ensureTemplate(template.templateId);
    const marker = `${path.sep}templates${path.sep}${template.templateId}${path.sep}`;
    const local = (file: string): string => {
      const at = file.indexOf(marker);
      return at < 0 ? file : path.join(dir, file.slice(at + marker.length));
    };
    return {
      ...template,
      kernelPath: local(template.kernelPath),
      initrdPath: local(template.initrdPath),
      rootfsPath: local(template.rootfsPath),
      ...(template.snapshotRoot ? { snapshotRoot: local(template.snapshotRoot) } : {}),
    };
  }

  /** Restores a new VM from a snapshot directory, within the host's restore slots. */
  async restoreFrom(
    snapshotDir: string,
    vcpuCount: VcpuCount,
    restoreMemoryMb: number,
    memoryMb: number,
    takeDisk = false,
    volumes: VolumeAttachment[] = [],
    network: RestoreNetwork = {},
  ): Promise<RestoredVm> {
    // Every new QEMU (an acquisition's, a pool refill's, a resume's, a clone's) passes the memory floor here, before
    // it takes a restore slot; a VM handed out from the pool runs already and needs none.
    assertHostMemory(this.kit.options.minFreeMemoryMb ?? 0);
    const { prepare } = network;
    const driverId = `vm-${randomBytes(8).toString('hex')}`;
    const { agent: client, ...info } = await this.restoreSlot(async () => {
      const started = Date.now();
      const restored = await this.kit.options.driver
        .restore({
          vmId: driverId,
          runDir: path.join(this.kit.runRoot, driverId),
          snapshotDir,
          memoryMb: restoreMemoryMb,
          network: this.kit.options.network,
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

  snapshotDir(snapshotId: string): string {
    return path.join(this.kit.options.captureRoot, 'snapshots', snapshotId);
  }

  async discard(vm: RestoredVm): Promise<void> {
    await vm.client.close().catch(() => {});
    await this.kit.options.driver.kill(vm.info.vmId).catch(() => {});
  }
}
