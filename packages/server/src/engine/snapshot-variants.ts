/**
 * The snapshots of one template (a bootable image: the built-in one, or one built from an OCI reference), one per
 * vCPU count (`snap1` … `snap8`) and memory tier, built on first need: cold-boot a VM, let the agent prepare
 * (helper and spare Python started, session closed), save. Snapshots live in a directory shared by every clone
 * on the machine, keyed by the image, the accelerator and the boot memory, and a cross-process lock makes sure
 * only one process builds each.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentClient } from '../agent/index.ts';
import { acquireFileLock } from '../image/file-lock.ts';
import { unusedEntries, type GuestImage } from '../image/index.ts';
import type { Accelerator, GuestImageFiles, SnapshotInfo, VcpuCount, VmDriver } from '../vm/vm-driver.ts';

/** Bump when the way snapshots are made changes, so old ones are not reused. */
const SNAPSHOT_FORMAT = 2;

export interface SnapshotVariantsOptions {
  driver: VmDriver<AgentClient>;
  /** The template's bootable files; `hash` names its snapshot set. */
  image: GuestImageFiles & Pick<GuestImage, 'hash'> & { prepare?: { argv: string[]; timeoutMs: number } };
  accelerator: Accelerator;
  /** The driver's `HostReport.snapshotKey`: snapshots of another key would not restore here. */
  snapshotKey: string;
  /** Root of all snapshots (traversable by the VM user). */
  snapshotRoot: string;
  /** Scratch space for the VM being snapshotted. */
  runRoot: string;
  /** Reports build progress (the first acquire of a variant waits for it). */
  onProgress?: (message: string) => void;
  /**
   * The cluster's copy of the snapshots (`artifacts.ts`): `fetch` brings one another node built into `dir` (false
   * when the cluster has none), `have` hands one this node has (built, or found from an earlier run) to the cluster,
   * which uploads it in the background when it lacks it.
   */
  cluster?: { fetch(dir: string): Promise<boolean>; have(dir: string): void };
}

/** A snapshot set's directory name: `<image hash>-<accelerator>-f<format>-<driver key>`. */
const SET_NAME = /^[0-9a-f]{16}-(?:kvm|tcg)-f\d+(?:-[0-9a-f]+)?$/;

/**
 * Removes snapshot sets under `snapshotRoot` other than `keepRoot` that no engine marked in use for `maxAgeMs`
 * (see `image/cache-retention.ts`); a set being built is recent (its lock file is new). Resolves the removed.
 */
export async function pruneSnapshotSets(snapshotRoot: string, keepRoot: string, maxAgeMs: number): Promise<string[]> {
  const stale = (await unusedEntries(snapshotRoot, [keepRoot], maxAgeMs)).filter((dir) => SET_NAME.test(path.basename(dir)));
  for (const dir of stale) await fs.promises.rm(dir, { recursive: true, force: true });
  return stale;
}

export function variantOf(vcpuCount: number): string {
  return `snap${vcpuCount}`;
}

/**
 * A memory range served by one set of snapshots: they boot with `bootMemoryMb` (the most a restore can
 * have) and are shrunk to `minMemoryMb` before saving (the least). Growing a restored guest is fast;
 * shrinking is slow (the balloon gives pages back one by one), so the ranges are tiers, not one big one.
 */
export interface MemoryTier {
  bootMemoryMb: number;
  minMemoryMb: number;
}

export class SnapshotVariants {
  private readonly building = new Map<string, Promise<SnapshotInfo>>();
  readonly root: string;

  constructor(private readonly options: SnapshotVariantsOptions) {
    this.root = path.join(options.snapshotRoot, `${options.image.hash.slice(0, 16)}-${options.accelerator}-f${SNAPSHOT_FORMAT}-${options.snapshotKey}`);
  }

  /** The snapshot of `vcpuCount` in `tier`, built if missing. */
  ensure(vcpuCount: VcpuCount, tier: MemoryTier): Promise<SnapshotInfo> {
    const name = `${variantOf(vcpuCount)}-m${tier.bootMemoryMb}-${tier.minMemoryMb}`;
    let pending = this.building.get(name);
    if (!pending) {
      pending = this.load(vcpuCount, tier, name);
      this.building.set(name, pending);
      pending.catch(() => this.building.delete(name));
    }
    return pending;
  }

  private async load(vcpuCount: VcpuCount, tier: MemoryTier, name: string): Promise<SnapshotInfo> {
    const dir = path.join(this.root, name);
    const existing = await this.options.driver.readSnapshot(dir);
    if (existing) {
      this.options.cluster?.have(dir);
      return existing;
    }
    // QEMU maps the snapshot's files after dropping to the VM user: every directory on the way must let it through.
    fs.mkdirSync(this.root, { recursive: true, mode: 0o711 });
    fs.chmodSync(this.options.snapshotRoot, 0o711);
    const lock = await acquireFileLock(path.join(this.root, `${name}.lock`), {
      onWait: () => this.options.onProgress?.(`waiting for another process to build snapshot ${name}`),
    });
    try {
      const built = await this.options.driver.readSnapshot(dir);
      if (built) return built;
      fs.rmSync(dir, { recursive: true, force: true });
      // Another node built it already: fetching it is seconds, a cold boot under TCG tens of them.
      if (await this.options.cluster?.fetch(dir).catch(() => false)) {
        const fetched = await this.options.driver.readSnapshot(dir);
        if (fetched) return fetched;
      }
      const info = await this.build(vcpuCount, tier, dir, name);
      this.options.cluster?.have(dir);
      return info;
    } finally {
      await lock.release();
    }
  }

  private async build(vcpuCount: VcpuCount, tier: MemoryTier, dir: string, name: string): Promise<SnapshotInfo> {
    const { driver, image } = this.options;
    const started = Date.now();
    const vmId = `snapshot-${variantOf(vcpuCount)}-${randomBytes(3).toString('hex')}`;
    this.options.onProgress?.(`building snapshot ${name}: cold boot (${this.options.accelerator})`);
    const vm = await driver.boot({
      vmId,
      runDir: path.join(this.options.runRoot, vmId),
      image,
      vcpuCount,
      memoryMb: tier.bootMemoryMb,
      // The source has no NIC backend; each restore attaches the network it asks for.
      network: 'none',
      snapshotDir: dir,
      timeoutMs: 180_000,
    });
    try {
      if (image.prepare) {
        this.options.onProgress?.(`building snapshot ${name}: preparing the template (${image.prepare.argv.join(' ')})`);
        const run = await vm.agent.exec({ argv: image.prepare.argv, env: {}, cwd: '/', timeoutMs: image.prepare.timeoutMs }).collect();
        if (run.result.exitCode !== 0) {
          throw new Error(
            `preparing snapshot ${name}: ${image.prepare.argv.join(' ')} ended with ${run.result.exitCode ?? run.result.signal}: ${(run.stderr.toString() || run.stdout.toString()).slice(-2000)}`,
          );
        }
      }
      await vm.agent.prepareSnapshot({ timeoutMs: 60_000 });
      await vm.agent.close();
      // Shrinking is the slow part under TCG (~35 MiB/s): allow for the largest tier.
      const info = await driver.saveSnapshot({ vmId, minMemoryMb: tier.minMemoryMb, timeoutMs: 900_000 });
      this.options.onProgress?.(`built snapshot ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return info;
    } catch (error) {
      await vm.agent.close().catch(() => {});
      await driver.kill(vmId).catch(() => {});
      throw error;
    }
  }
}
