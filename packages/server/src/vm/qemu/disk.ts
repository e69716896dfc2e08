/**
 * Root disks: every VM writes only its own qcow2 overlay; the backing chain (the image's rootfs, and for a
 * clone the snapshot's frozen overlay) is only ever opened read-only, so any number of VMs share it.
 */
import { chmod, chown } from 'node:fs/promises';
import { runProgram } from './exec-file.ts';
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
  owner: { uid: number; gid: number } | null;
}): Promise<void> {
  await runProgram(options.qemuImgBinary, ['create', '-q', '-f', 'qcow2', '-F', options.backingFormat, '-b', options.backingPath, options.overlayPath]);
  await chmod(options.overlayPath, 0o600);
  if (options.owner) await chown(options.overlayPath, options.owner.uid, options.owner.gid);
}

/**
 * Grows the root drive's virtual size to `sizeBytes` with QMP `block_resize` (a no-op when it is that large
 * already: `block_resize` would shrink it). virtio-blk tells the guest with a configuration interrupt, and its
 * kernel updates the device's size. A qcow2 overlay may be larger than its backing file: reads past the backing
 * file's end are zeros.
 */
export async function growRootDisk(qmp: QmpClient, sizeBytes: number): Promise<void> {
  const devices = await qmp.execute<{ device: string; inserted?: { image: { 'virtual-size': number } } }[]>('query-block');
  const current = devices.find((device) => device.device === ROOT_DRIVE_ID)?.inserted?.image['virtual-size'];
  if (current === undefined) throw new Error(`QEMU has no drive ${ROOT_DRIVE_ID}`);
  if (current >= sizeBytes) return;
  await qmp.execute('block_resize', { device: ROOT_DRIVE_ID, size: sizeBytes });
}
