/**
 * Root disks: every VM writes only its own qcow2 overlay; the backing chain (the image's rootfs, and for a
 * clone the snapshot's frozen overlay) is only ever opened read-only, so any number of VMs share it.
 */
import { chmod, chown } from 'node:fs/promises';
import { runProgram } from './exec-file.ts';

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
