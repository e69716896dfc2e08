/**
 * A VM's disk quota and the host's free-space floor.
 *
 * Every VM is restored with the guest image's root filesystem (2 GiB for the default image, which carries Python's
 * data-analysis packages; a quota at or below it keeps that size); once it is handed out, its disk grows to the
 * user's quota: the driver enlarges the block device (QMP `block_resize`; the guest kernel is told
 * at once) and `resize2fs` grows the mounted ext4 into it, online. The device's size is the hard limit: a guest
 * that writes past it gets ENOSPC from its own filesystem, never an I/O error, and the overlay on the host can
 * only hold what the device holds, plus qcow2 metadata. Measured under TCG: 1 → 2 GiB took 0.56 s of
 * `resize2fs`, 1 → 16 GiB 0.96 s, each adding ~10 MiB of metadata to the overlay. The engine starts it in the
 * background after the identity fix-up (two seconds later under TCG, where it costs ~0.9 s of guest CPU), and
 * `resize2fs` runs at nice 19, so a session's first request does not wait for it.
 *
 * The floor: a new VM (and a warm-pool refill) is refused while the filesystem of the run directory has less
 * free space than `minFreeDiskMb`, before anything is created for it.
 */
import { statfs } from 'node:fs/promises';
import type { AgentClient } from '../agent/index.ts';
import { AppError } from '../core/errors.ts';
import type { VmDriver } from '../vm/vm-driver.ts';

/** The guest's root block device (boot contract: `sandboxd.root`, default `/dev/vda`). */
const ROOT_DEVICE = '/dev/vda';
/** Growing a 1 GiB filesystem to 16 GiB took under 1 s of guest time; a loaded host may be far slower. */
const RESIZE_TIMEOUT_MS = 120_000;

/** Grows a handed-out VM's disk, then its root filesystem, to `diskMb`. Idempotent. */
export async function growRootFilesystem(driver: VmDriver<AgentClient>, driverId: string, client: AgentClient, diskMb: number): Promise<void> {
  await driver.growDisk(driverId, diskMb);
  const { stderr, result } = await client.exec({ argv: ['nice', '-n', '19', 'resize2fs', ROOT_DEVICE], timeoutMs: RESIZE_TIMEOUT_MS }).collect();
  if (result.exitCode !== 0) throw new Error(`resize2fs ${ROOT_DEVICE} ended with ${result.signal ?? `exit ${result.exitCode}`}: ${stderr.toString().trim()}`);
}

/** Free space of the filesystem holding `dir`, MiB (what an unprivileged writer may use). */
async function freeDiskMb(dir: string): Promise<number> {
  const stats = await statfs(dir);
  return (stats.bavail * stats.bsize) / (1024 * 1024);
}

/** Throws HOST_STORAGE_LOW when the filesystem of `runRoot` has less than `minFreeMb` free. */
export async function assertHostStorage(runRoot: string, minFreeMb: number): Promise<void> {
  if (minFreeMb <= 0) return;
  const freeMb = await freeDiskMb(runRoot);
  if (freeMb >= minFreeMb) return;
  throw new AppError(
    'HOST_STORAGE_LOW',
    `the server is low on disk space (${Math.floor(freeMb)} MiB free, it keeps at least ${minFreeMb} MiB) and starts no new VM until space is freed: retry later or ask the operator`,
  );
}
