/** Schemas of persistent volumes (the spec's "persistent volumes"; fields not shown there are sandboxd's). */
import { Type, type Static } from 'typebox';
import type { VolumeInUse } from '../../../core/volumes.ts';
import { MAX_VOLUMES_PER_VM } from '../../../core/vm-engine.ts';
import { MAX_MOUNT_PATH_LENGTH, MOUNT_PATH_PATTERN, RESERVED_MOUNT_POINTS, RESERVED_MOUNT_ROOTS } from '../../../core/volume-paths.ts';
import { SourceName } from '../sessions/schemas.ts';

export const VolumeRecord = Type.Object(
  {
    volume_id: Type.String(),
    name: Type.String(),
    size_mb: Type.Integer(),
    user_id: Type.Integer({ description: 'The owner' }),
    node_id: Type.String({
      description:
        "The node whose disk holds its latest data. Without the cluster's object store (SANDBOXD_ARTIFACTS off) VMs that mount it run there; with it, any node mounts it once `in_object_store` (it is fetched first)",
    }),
    in_object_store: Type.Boolean({
      description: 'Whether the object store has its latest data too: its last writer ended or paused and its image was uploaded (false while a VM writes it)',
    }),
    created_at: Type.String({ format: 'date-time' }),
    attachments: Type.Array(Type.Object({ vm_id: Type.String(), mount_path: Type.String(), read_only: Type.Boolean() }), {
      description: 'The VMs that have it mounted and have not ended',
    }),
  },
  { $id: 'VolumeRecord', title: 'VolumeRecord' },
);

export const VolumeIdParams = Type.Object({ volume_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const VolumeName = {
  ...SourceName,
  description: 'Unique among your volumes: letters, digits, ".", "_" and "-", at most 63, starting with a letter or digit',
};

/** A volume a new VM mounts (`POST /v1/vms` `volumes`). */
export const VolumeMountRequest = Type.Object({
  volume_id: Type.String({ minLength: 1, maxLength: 64 }),
  mount_path: Type.String({
    maxLength: MAX_MOUNT_PATH_LENGTH,
    pattern: MOUNT_PATH_PATTERN,
    description: `Where the guest mounts it: absolute and normalized, of letters, digits, ".", "_" and "-"; not /, ${RESERVED_MOUNT_POINTS.join(', ')}, nor at or below ${RESERVED_MOUNT_ROOTS.join(', ')}`,
  }),
  read_only: Type.Boolean({ default: false, description: 'Mount it read-only: writes fail, and other VMs may mount it read-only at the same time' }),
});

export const VolumeMounts = Type.Array(VolumeMountRequest, {
  maxItems: MAX_VOLUMES_PER_VM,
  description: `Persistent volumes to mount (at most ${MAX_VOLUMES_PER_VM}, at distinct paths). A volume mounted read-write by a VM that has not ended cannot be mounted by another (409); they become the session's, mounted again in its next VMs. A snapshot or clone unmounts them in the guest for its moment (409 naming the path if a process keeps one busy) and holds none of them; a pause keeps them mounted.`,
});

export function toVolumeRecord({ volume, attachments }: VolumeInUse): Static<typeof VolumeRecord> {
  return {
    volume_id: volume.id,
    name: volume.name,
    size_mb: volume.sizeMb,
    user_id: volume.userId,
    node_id: volume.nodeId,
    in_object_store: volume.inStore,
    created_at: volume.createdAt,
    attachments: attachments.map((attachment) => ({ vm_id: attachment.vmId, mount_path: attachment.mountPath, read_only: attachment.readOnly })),
  };
}

export const VOLUME_SCHEMAS = [VolumeRecord];
