/**
 * A VM's transfer area: the host directory behind the guest's virtio-9p share (mount tag
 * `TRANSFER_MOUNT_TAG` of the agent protocol), through which large files cross as chunk files while only control messages use
 * the agent link (see `packages/server/src/agent/transfer.ts`). Why 9p: a virtio-serial port hands the guest
 * 4 KiB per read, which under TCG caps uploads near 5 MiB/s; 9p moves up to 512 KiB per request.
 *
 * The guest can write into its share, so the area is a tmpfs of its own: capped in bytes and inodes (a guest
 * can neither fill the host's disk through it nor hold more than the cap of host memory), owned by the VM user
 * with mode 0700, `nosuid,nodev,noexec`. Where it cannot be mounted (the server is not root), the share is
 * exported read-only and stays empty, and files travel over the agent link.
 */
import { chown, lstat, mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CHUNK_BYTES, TRANSFER_SLOTS } from '../../agent/transfer.ts';
import { runProgram } from '../../host/run-program.ts';

/** Size cap of an area: room for every chunk the host lets be in flight, plus 2 MiB for the file system. */
const TRANSFER_AREA_MB = (TRANSFER_SLOTS * CHUNK_BYTES) / (1024 * 1024) + 2;
/** Inode cap: chunk files are few at any time. */
const TRANSFER_AREA_INODES = 256;

/** True when `dir` is a mounted area: a mount point (its device differs from its parent's). */
export async function isTransferArea(dir: string): Promise<boolean> {
  try {
    const [self, parent] = await Promise.all([lstat(dir), lstat(dirname(dir))]);
    return self.isDirectory() && self.dev !== parent.dev;
  } catch {
    return false;
  }
}

/**
 * Creates the area at `dir` (inside a run directory). Resolves true when it is a capped tmpfs the host may use,
 * false when only a plain, empty directory could be made (to be exported read-only).
 */
export async function createTransferArea(dir: string, vmUser: { uid: number; gid: number } | null): Promise<boolean> {
  await mkdir(dir, { mode: 0o700 });
  // QEMU opens the export after dropping to the VM user, mounted or not.
  if (vmUser) await chown(dir, vmUser.uid, vmUser.gid);
  if (process.getuid?.() !== 0) return false;
  const owner = vmUser ?? { uid: 0, gid: 0 };
  const options = [
    `size=${TRANSFER_AREA_MB}m`,
    `nr_inodes=${TRANSFER_AREA_INODES}`,
    'mode=0700',
    `uid=${owner.uid}`,
    `gid=${owner.gid}`,
    'nosuid',
    'nodev',
    'noexec',
  ];
  try {
    await runProgram('mount', ['-t', 'tmpfs', '-o', options.join(','), 'sandboxd-transfer', dir], { timeoutMs: 10_000 });
    return true;
  } catch {
    return false; // e.g. a container without CAP_SYS_ADMIN: the share stays read-only and empty
  }
}

/** Unmounts (lazily: QEMU may be going away just now) and removes the area; nothing there is kept. */
export async function removeTransferArea(dir: string): Promise<void> {
  if (await isTransferArea(dir)) await runProgram('umount', ['--lazy', dir], { timeoutMs: 10_000 });
  await rm(dir, { recursive: true, force: true });
}
