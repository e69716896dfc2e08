/**
 * Persistent volumes on this node: each is a sparse raw image holding an ext4 filesystem, made on the host
 * (mkfs.ext4 on the file, no guest needed) and mounted in a guest through the agent. The driver puts an image in
 * one of a VM's volume slots at restore, or swaps it into a pooled VM's slot (`vm/qemu/volume-slots.ts`); this
 * module formats, checks, mounts, flushes, and unmounts for a capture. Nothing a user chose reaches a shell as code: the mount script takes its values as positional
 * arguments, and host programs run by argv.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { VOLUME_SERIAL_PREFIX } from '@sandboxd/agent/protocol';
import type { AgentClient } from '../agent/index.ts';
import { AppError } from '../core/errors.ts';
import type { VolumeMount } from '../core/vm-engine.ts';

/**
 * The host's mkfs.ext4 (in /usr/sbin, often outside an unprivileged PATH). It only ever writes a new, empty
 * file: the host never reads a filesystem a guest wrote (checks and repairs run in the guest, see MOUNT_SCRIPT),
 * because a guest can write anything to its volume, and e2fsprogs has had bugs exploitable by crafted images.
 */
export interface VolumeTools {
  mkfsBinary: string;
}

export const DEFAULT_VOLUME_TOOLS: VolumeTools = { mkfsBinary: '/usr/sbin/mkfs.ext4' };

/** How long mounting a VM's volumes may take in the guest. */
const GUEST_TIMEOUT_MS = 30_000;
/** How long a kill waits for the guest to flush its volumes (a kill must not hang on a stuck guest). */
const FLUSH_TIMEOUT_MS = 15_000;

/** Volume ids name files: they must be the core's ids, nothing a path could be made of. */
const VOLUME_ID = /^vol_[A-Za-z0-9]{8,64}$/;

/** Where volume `id`'s image lives under `root`. */
export function volumeImagePath(root: string, id: string): string {
  if (!VOLUME_ID.test(id)) throw new Error(`not a volume id: ${id}`);
  return path.join(root, `${id}.img`);
}

const execFileAsync = promisify(execFile);

/**
 * Makes a new volume's image: a sparse file of `sizeMb` (exclusive create: an existing id is an error) with an
 * empty ext4 filesystem (no blocks reserved for root: the guest's user is root anyway). The directory is
 * traversable (QEMU's unprivileged user opens images in it by path) but not listable.
 */
export async function createVolumeImage(root: string, id: string, sizeMb: number, tools: VolumeTools): Promise<void> {
  await fs.promises.mkdir(root, { recursive: true, mode: 0o711 });
  const file = volumeImagePath(root, id);
  const handle = await fs.promises.open(file, 'wx', 0o600);
  try {
    await handle.truncate(sizeMb * 1024 * 1024);
  } finally {
    await handle.close();
  }
  try {
    await execFileAsync(tools.mkfsBinary, ['-q', '-F', '-m', '0', '-E', 'root_owner=0:0', file], { timeout: 120_000 });
  } catch (error) {
    await fs.promises.rm(file, { force: true });
    throw new Error(`formatting volume ${id} failed: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}`, { cause: error });
  }
}

export async function deleteVolumeImage(root: string, id: string): Promise<void> {
  await fs.promises.rm(volumeImagePath(root, id), { force: true });
}

/**
 * The guest's side of an attachment, run by `sh -c` with the values as `$1`…: finds the slot's disk by its serial;
 * waits until its kernel sees the image's size (up to 5 s: a volume swapped into a running VM's slot is announced
 * by an interrupt); marks it writable (a read-only mount left it read-only, and the same slot of the same guest,
 * after a capture or in a VM from its snapshot, may now hold a volume mounted read-write; e2fsck needs it
 * writable anyway); replays the journal and makes the repairs `e2fsck -p` makes unattended (a writer that
 * crashed, or ended without its flush, leaves them to do: an ext4 that needs recovery does not mount read-only); marks the disk
 * read-only for a read-only mount (the guest's kernel took it for writable when its snapshot booted); mounts it.
 * A read-only volume's repairs land in its VM's throw-away layer, never on the image. `$1` serial, `$2` mount
 * path, `$3` `ro` or `rw`.
 */
const MOUNT_SCRIPT = [
  'set -eu',
  'dev=',
  'for d in /sys/block/vd*; do if [ "$(cat "$d/serial" 2>/dev/null)" = "$1" ]; then dev=/dev/${d##*/}; fi; done',
  '[ -n "$dev" ] || { echo "no disk with serial $1" >&2; exit 1; }',
  // A running VM's kernel learns a swapped-in image's size from a configuration interrupt, a moment later.
  'i=0; while [ "$(cat "/sys/block/${dev#/dev/}/size")" = 0 ]; do i=$((i+1)); [ $i -le 100 ] || { echo "the disk with serial $1 is empty (0 bytes)" >&2; exit 1; }; sleep 0.05; done',
  'blockdev --setrw "$dev"',
  // e2fsck: 0 clean, 1 repaired, 2 repaired (reboot advised: not for a disk that is not mounted); 4 and up: not repaired.
  'e2fsck -p "$dev" >&2 || [ $? -lt 4 ] || { echo "the filesystem has errors e2fsck -p does not repair" >&2; exit 1; }',
  'if [ "$3" = ro ]; then blockdev --setro "$dev"; fi',
  'mkdir -p -- "$2"',
  'mount -t ext4 -o "$3,nodev,nosuid" -- "$dev" "$2"',
].join('\n');

/**
 * Mounts a VM's volumes, slot `i` holding `volumes[i]` (the order `acquire` gave the driver); with `slots`, only
 * those slots' volumes (the others are mounted already).
 */
export async function mountVolumes(client: AgentClient, volumes: readonly VolumeMount[], slots?: readonly number[]): Promise<void> {
  for (const [slot, volume] of volumes.entries()) {
    if (slots && !slots.includes(slot)) continue;
    const argv = ['/bin/sh', '-c', MOUNT_SCRIPT, 'sandboxd-mount', `${VOLUME_SERIAL_PREFIX}${slot}`, volume.mountPath, volume.readOnly ? 'ro' : 'rw'];
    const { stderr, result } = await client.exec({ argv, timeoutMs: GUEST_TIMEOUT_MS }).collect();
    if (result.exitCode !== 0)
      throw new Error(
        `mounting volume ${volume.volumeId} at ${volume.mountPath} failed: ${stderr.toString().trim() || `exit ${result.exitCode ?? result.signal}`}`,
      );
  }
}

/**
 * Before QEMU is killed: unmounts the VM's volumes (falling back to a sync when a process holds one open), so
 * what the guest wrote is on the image and its filesystem clean. The guest's page cache would otherwise die with it.
 */
export async function flushVolumes(client: AgentClient, volumes: readonly VolumeMount[]): Promise<void> {
  const paths = volumes.filter((volume) => !volume.readOnly).map((volume) => volume.mountPath);
  if (paths.length === 0) return;
  const script = 'sync; for p in "$@"; do umount -- "$p" 2>/dev/null || umount -l -- "$p" 2>/dev/null || true; done; sync';
  await client
    .exec({ argv: ['/bin/sh', '-c', script, 'sandboxd-flush', ...paths], timeoutMs: FLUSH_TIMEOUT_MS, signal: AbortSignal.timeout(FLUSH_TIMEOUT_MS + 2000) })
    .collect();
}

/**
 * The guest's side of an unmount for a capture, `$1` the mount path: flushes and unmounts it. Exit 0 unmounted,
 * 3 not mounted (the user unmounted it: nothing to do), 16 busy (a process has a file open there or its working
 * directory in it: never a lazy unmount, which would leave the filesystem live under the capture).
 */
const UNMOUNT_SCRIPT = ['mountpoint -q -- "$1" || exit 3', 'sync -f -- "$1"', 'umount -- "$1" || exit 16'].join('\n');

/**
 * Unmounts the volumes in `slots` (slot `i` holding `volumes[i]`) so that a capture holds none of their
 * filesystems' state; answers the slots it unmounted (to mount again after the capture). A volume a process keeps
 * busy is CONFLICT naming its mount path, after the ones already unmounted are mounted again: nothing changed.
 */
export async function unmountVolumesForCapture(client: AgentClient, volumes: readonly VolumeMount[], slots: readonly number[]): Promise<number[]> {
  const unmounted: number[] = [];
  for (const [slot, volume] of volumes.entries()) {
    if (!slots.includes(slot)) continue;
    const argv = ['/bin/sh', '-c', UNMOUNT_SCRIPT, 'sandboxd-unmount', volume.mountPath];
    const { stderr, result } = await client.exec({ argv, timeoutMs: GUEST_TIMEOUT_MS }).collect();
    if (result.exitCode === 0) {
      unmounted.push(slot);
      continue;
    }
    if (result.exitCode === 3) continue;
    await mountVolumes(client, volumes, unmounted).catch(() => undefined);
    if (result.exitCode === 16) {
      throw new AppError(
        'CONFLICT',
        `volume ${volume.volumeId} at ${volume.mountPath} is busy (a process has a file open there or its working directory in it): a capture unmounts the VM's volumes for the moment it takes; end that process or move it out of ${volume.mountPath}, then try again`,
      );
    }
    throw new Error(
      `unmounting volume ${volume.volumeId} at ${volume.mountPath} failed: ${stderr.toString().trim() || `exit ${result.exitCode ?? result.signal}`}`,
    );
  }
  return unmounted;
}

/** Flushes what the guest wrote to its read-write volumes to their images (they stay mounted). */
export async function syncVolumes(client: AgentClient, volumes: readonly VolumeMount[]): Promise<void> {
  const paths = volumes.filter((volume) => !volume.readOnly).map((volume) => volume.mountPath);
  if (paths.length === 0) return;
  const script = 'for p in "$@"; do if mountpoint -q -- "$p"; then sync -f -- "$p"; fi; done; sync';
  const { stderr, result } = await client.exec({ argv: ['/bin/sh', '-c', script, 'sandboxd-sync', ...paths], timeoutMs: GUEST_TIMEOUT_MS }).collect();
  if (result.exitCode !== 0) throw new Error(`flushing the VM's volumes failed: ${stderr.toString().trim() || `exit ${result.exitCode ?? result.signal}`}`);
}
