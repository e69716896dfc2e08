/**
 * Root disks: every VM writes only its own qcow2 overlay; the backing chain (the image's rootfs, and for a
 * clone the snapshot's frozen overlay) is only ever opened read-only, so any number of VMs share it.
 */
import { chmod, chown, copyFile, link } from 'node:fs/promises';
import { runProgram } from '../../host/run-program.ts';
import type { QmpClient } from './qmp-client.ts';

/** The root drive's id in the QEMU command line (`-drive id=root`). */
export const ROOT_DRIVE_ID = 'root';

/**
 * Creates `overlayPath` over `backingPath` (absolute; the overlay records it) and gives it to `owner`, the
 * user QEMU runs as: after an incoming migration QEMU reopens its writable image by path with its own
 * rights (`cont` re-activates block devices).
 */
export async function createOverlay(options: {
  qemuImgBinary: string;
  overlayPath: string;
  backingPath: string;
  backingFormat: 'raw' | 'qcow2';
  /**
   * The overlay's virtual size; default the backing file's. When given, the backing file is not opened (`-u`):
   * a live capture makes the next layer over one that QEMU still holds with its write lock.
   */
  sizeBytes?: number;
  owner: { uid: number; gid: number } | null;
}): Promise<void> {
  const args = ['create', '-q', '-f', 'qcow2', '-F', options.backingFormat, '-b', options.backingPath];
  if (options.sizeBytes === undefined) args.push(options.overlayPath);
  else args.push('-u', options.overlayPath, String(options.sizeBytes));
  await runProgram(options.qemuImgBinary, args);
  await chmod(options.overlayPath, 0o600);
  if (options.owner) await chown(options.overlayPath, options.owner.uid, options.owner.gid);
}

/** A qcow2 disk of `sizeBytes` with no backing file, owned by `owner`. */
export async function createBlankDisk(options: {
  qemuImgBinary: string;
  path: string;
  sizeBytes: number;
  owner: { uid: number; gid: number } | null;
}): Promise<void> {
  await runProgram(options.qemuImgBinary, ['create', '-q', '-f', 'qcow2', options.path, String(options.sizeBytes)]);
  await chmod(options.path, 0o600);
  if (options.owner) await chown(options.path, options.owner.uid, options.owner.gid);
}

/**
 * Gives `from` a second name `to`: a hard link (the same bytes, nothing copied) where both are on one
 * filesystem, else a copy. Snapshot layers are handed between run and snapshot directories this way.
 */
export async function linkOrCopyFile(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(from, to);
  }
}

/** The virtual size of the root drive, bytes (what the guest sees, grown by `growRootDisk`). */
export async function rootDiskBytes(qmp: QmpClient): Promise<number> {
  const devices = await qmp.execute<{ device: string; inserted?: { image: { 'virtual-size': number } } }[]>('query-block');
  const current = devices.find((device) => device.device === ROOT_DRIVE_ID)?.inserted?.image['virtual-size'];
  if (current === undefined) throw new Error(`QEMU has no drive ${ROOT_DRIVE_ID}`);
  return current;
}

/**
 * Grows the root drive's virtual size to `sizeBytes` with QMP `block_resize` (a no-op when it is that large
 * already: `block_resize` would shrink it). virtio-blk tells the guest with a configuration interrupt, and its
 * kernel updates the device's size. A qcow2 overlay may be larger than its backing file: reads past the backing
 * file's end are zeros.
 */
export async function growRootDisk(qmp: QmpClient, sizeBytes: number): Promise<void> {
  if ((await rootDiskBytes(qmp)) >= sizeBytes) return;
  await qmp.execute('block_resize', { device: ROOT_DRIVE_ID, size: sizeBytes });
}
