import { open, rm } from 'node:fs/promises';
import { runCommand } from './run-command.ts';

/** Options of `createExt4Image`. */
export interface Ext4ImageOptions {
  sizeBytes: number;
  label: string;
  /** Filesystem UUID; derived from the image hash so that rebuilding the same inputs gives the same UUID. */
  uuid: string;
  onLine?: (line: string) => void;
}

/**
 * Writes the directory tree `sourceDir` into a new sparse ext4 image of `sizeBytes` virtual size.
 * Only the used blocks are allocated. mke2fs discards (hole-punches) a regular file and so can mark every
 * inode table as zeroed up front: the guest kernel then has no lazy inode-table init to run, which would
 * otherwise write ~100 MB into every VM's overlay after boot. No blocks are reserved for root, since
 * everything in the guest runs as root anyway.
 *
 * `discard` is made a default mount option (in the superblock, so no boot file has to say it): a file the guest
 * deletes is discarded at the next journal commit and its clusters leave the VM's qcow2 overlay on the host
 * (the drive passes discards through). Measured under TCG: `rm` of a 1.5 GiB file shrank the overlay from
 * 1585 to 11 MiB at once, for 1.0 s instead of 0.6 s of `rm` + `sync`; 2000 small files created and removed
 * took no longer than without it. A periodic `fstrim` would free the same space (1.05 s for 1.6 GiB) but only
 * whenever something runs it.
 */
export async function createExt4Image(sourceDir: string, imagePath: string, options: Ext4ImageOptions): Promise<void> {
  await rm(imagePath, { force: true });
  const file = await open(imagePath, 'w');
  try {
    await file.truncate(options.sizeBytes);
  } finally {
    await file.close();
  }
  await runCommand('mkfs.ext4', ['-q', '-F', '-m', '0', '-L', options.label, '-U', options.uuid, '-E', 'root_owner=0:0', '-d', sourceDir, imagePath], {
    stdout: 'lines',
    onLine: options.onLine,
  });
  await runCommand('tune2fs', ['-o', 'discard', imagePath], { stdout: 'lines', onLine: options.onLine });
}
