/**
 * Volumes that follow their VMs across the nodes of a cluster (with the cluster's object store,
 * `VmEngine.portableCaptures`): the images a VM wrote go to the store when it ends or pauses, and a node that
 * mounts a volume another node wrote last fetches it first. The volume's row says where its latest data is
 * (`node_id`, and `in_store` when the store has it too); the one-writer rule holds cluster-wide, since a VM's
 * attachment holds its volumes until its end is recorded, which comes after the upload.
 */
import { findVolume, setVolumeHome, vmAttachments } from '../../store/volumes-store.ts';
import { assertFetchable } from '../volumes.ts';
import type { VolumeMount } from '../vm-engine.ts';
import type { Ownership } from '../cluster/ownership.ts';
import type { VmServiceDeps } from './types.ts';

/**
 * Uploads the images this node's VM `vmId` wrote (its volumes mounted read-write), once it is gone or paused; an
 * upload that fails leaves the data on this node only (other nodes are then told which node has it) and is
 * reported as a failure of `volume_upload`.
 */
export async function publishVolumes(deps: VmServiceDeps, vmId: string): Promise<void> {
  const { database, engine } = deps;
  if (!engine.portableCaptures) return;
  for (const attachment of await vmAttachments(database.db, vmId)) {
    if (attachment.readOnly) continue;
    const volume = await findVolume(database.db, attachment.volumeId);
    if (!volume || volume.nodeId !== engine.nodeId) continue;
    try {
      await engine.publishVolume(volume.id, { userId: volume.userId });
      await setVolumeHome(database.db, volume.id, { inStore: true });
    } catch (error) {
      deps.failures?.report('volume_upload', error);
    }
  }
}

/**
 * The volumes a paused VM had mounted, made ready on this node for its resume: those another node wrote last are
 * fetched from the store (503 when the store does not have their latest data), and a writer's becomes this node's.
 */
export async function volumesForResume(deps: VmServiceDeps, ownership: Ownership, vmId: string): Promise<VolumeMount[]> {
  const { database, engine } = deps;
  const mounts: VolumeMount[] = [];
  for (const attachment of await vmAttachments(database.db, vmId)) {
    const volume = await findVolume(database.db, attachment.volumeId);
    if (volume && !ownership.isLocal(volume)) {
      assertFetchable(volume, ownership, engine.portableCaptures);
      await engine.fetchVolume(volume.id);
      if (!attachment.readOnly) await setVolumeHome(database.db, volume.id, { nodeId: ownership.nodeId, inStore: false });
    }
    mounts.push({ volumeId: attachment.volumeId, mountPath: attachment.mountPath, readOnly: attachment.readOnly });
  }
  return mounts;
}
