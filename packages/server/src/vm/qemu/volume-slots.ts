/**
 * Volumes in a VM's slots. Every VM has `VOLUME_SLOT_COUNT` virtio-blk devices after its root disk; a snapshot's
 * source booted with placeholders there (0-byte disks), so its guest's kernel believes each slot empty. A restore
 * points a slot's node at a volume's image (`command-line.ts`); a running VM (one from the warm pool) gets one by
 * `attachToRunningVm`, which swaps the slot's child node. This module checks the request, makes the drives and
 * tells the guest each image's real size.
 *
 * A read-only attachment cannot be a `readonly=on` drive: QEMU refuses `block_resize` on it ("Image is
 * read-only"), and without the resize the guest sees 0 bytes. So its drive is a qcow2 layer in the VM's run
 * directory over the volume's image, which QEMU opens read-only as a backing file: the volume never changes,
 * whatever the guest does (the engine also mounts it read-only), and the layer goes with the run directory.
 */
import { randomBytes } from 'node:crypto';
import { chown, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { VOLUME_SLOT_COUNT, type VolumeAttachment } from '../vm-driver.ts';
import { VmError } from '../vm-errors.ts';
import { slotChildNode, volumeDriveId } from './command-line.ts';
import { createOverlay } from './disk.ts';
import type { LiveVm } from './live-vm.ts';
import type { QmpClient } from './qmp-client.ts';
import { readStateFile, writeStateFile } from './run-dir.ts';

/**
 * Throws VM_INVALID_REQUEST unless each volume has its own slot and an absolute path to a regular file; gives each
 * image to `owner`, the user QEMU drops to (it opens the image after dropping privileges).
 */
export async function checkVolumes(volumes: readonly VolumeAttachment[], owner: { uid: number; gid: number } | null): Promise<VolumeAttachment[]> {
  const slots = new Set<number>();
  for (const volume of volumes) {
    if (!Number.isInteger(volume.slot) || volume.slot < 0 || volume.slot >= VOLUME_SLOT_COUNT) {
      throw new VmError('VM_INVALID_REQUEST', `volume slots are 0 to ${VOLUME_SLOT_COUNT - 1}, got ${volume.slot}`);
    }
    if (slots.has(volume.slot)) throw new VmError('VM_INVALID_REQUEST', `slot ${volume.slot} is given two volumes`);
    slots.add(volume.slot);
    if (!isAbsolute(volume.imagePath)) throw new VmError('VM_INVALID_REQUEST', `a volume's image path must be absolute, got ${volume.imagePath}`);
    const info = await stat(volume.imagePath).catch(() => undefined);
    if (!info?.isFile()) throw new VmError('VM_INVALID_REQUEST', `no volume image at ${volume.imagePath}`);
    if (owner && (info.uid !== owner.uid || info.gid !== owner.gid)) await chown(volume.imagePath, owner.uid, owner.gid);
  }
  return volumes.map((volume) => ({ slot: volume.slot, imagePath: volume.imagePath, readOnly: volume.readOnly }));
}

/**
 * Tells the guest each attached image's size: QMP `block_resize` to the size it has makes virtio-blk raise a
 * configuration interrupt, and the guest's kernel reads the capacity again (as for the root disk's growth).
 */
export async function announceVolumeSizes(qmp: QmpClient, volumes: readonly VolumeAttachment[]): Promise<void> {
  for (const volume of volumes) {
    const { size } = await stat(volume.imagePath);
    await qmp.execute('block_resize', { 'node-name': volumeDriveId(volume.slot), size });
  }
}

/** The drives of the attached volumes: the image itself, or a throw-away layer over it for a read-only one. */
export async function volumeDrives(
  qemuImgBinary: string,
  volumes: readonly VolumeAttachment[],
  runDir: string,
  owner: { uid: number; gid: number } | null,
): Promise<{ slot: number; imagePath: string; format: 'raw' | 'qcow2' }[]> {
  const drives = [];
  for (const volume of volumes) {
    if (!volume.readOnly) {
      drives.push({ slot: volume.slot, imagePath: volume.imagePath, format: 'raw' as const });
      continue;
    }
    const layer = join(runDir, `volume${volume.slot}.qcow2`);
    await createOverlay({ qemuImgBinary, overlayPath: layer, backingPath: volume.imagePath, backingFormat: 'raw', owner });
    drives.push({ slot: volume.slot, imagePath: layer, format: 'qcow2' as const });
  }
  return drives;
}

/**
 * Puts volumes in the empty slots of a running VM (one taken from the warm pool): for each, its backing is added
 * as a block node (the image, or a read-only one's layer over it), `blockdev-reopen` makes it the child of the
 * slot's raw node in place of the placeholder, and `block_resize` tells the guest the size. The device, and so
 * the device state, never changes. Measured under TCG: a few milliseconds per volume on the host's side.
 */
export async function attachToRunningVm(
  vm: LiveVm,
  requested: readonly VolumeAttachment[],
  qemuImgBinary: string,
  owner: { uid: number; gid: number } | null,
): Promise<void> {
  const { qmp } = vm;
  if (vm.state !== 'running' || !qmp) throw new VmError('VM_BAD_STATE', `VM ${vm.info.vmId} is ${vm.state}: volumes are attached to a running VM`);
  if (vm.capturing) throw new VmError('VM_BAD_STATE', `VM ${vm.info.vmId} is being captured`);
  const volumes = await checkVolumes(requested, owner);
  const taken = volumes.find((volume) => vm.info.volumes.some((held) => held.slot === volume.slot));
  if (taken) throw new VmError('VM_INVALID_REQUEST', `slot ${taken.slot} of VM ${vm.info.vmId} holds a volume already`);
  const drives = await volumeDrives(qemuImgBinary, volumes, vm.paths.runDir, owner);
  for (const drive of drives) {
    const id = volumeDriveId(drive.slot);
    const child = `${id}-${randomBytes(4).toString('hex')}`;
    await qmp.execute('blockdev-add', { 'node-name': child, ...slotChildNode(drive) });
    await qmp.execute('blockdev-reopen', { options: [{ driver: 'raw', 'node-name': id, discard: 'unmap', file: child }] });
    vm.info.volumes = [...vm.info.volumes, volumes.find((volume) => volume.slot === drive.slot)!];
  }
  await announceVolumeSizes(qmp, volumes);
  // A re-adopted VM's capture reads its volumes from the state file.
  const state = await readStateFile(vm.paths.statePath);
  if (state) await writeStateFile(vm.paths.statePath, { ...state, volumes: vm.info.volumes });
}
