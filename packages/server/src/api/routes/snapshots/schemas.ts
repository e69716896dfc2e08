/** Schemas of snapshots (the spec's "VM snapshot" and "VM clone"; fields not shown there are sandboxd's). */
import { Type, type Static } from 'typebox';
import { SNAPSHOT_STATUSES, type Snapshot } from '../../../model.ts';
import { StringEnum } from '../../schemas/common.ts';

export const SnapshotRecord = Type.Object(
  {
    snapshot_id: Type.String(),
    name: Type.String(),
    status: StringEnum(SNAPSHOT_STATUSES, { description: '"creating" while the VM is being captured, then "ready"' }),
    user_id: Type.Integer({ description: 'The owner' }),
    source_vm_id: Type.Union([Type.String(), Type.Null()], { description: 'The VM it was taken of' }),
    parent_id: Type.Union([Type.String(), Type.Null()], { description: 'The snapshot its disk layer builds on (null: its template)' }),
    template_id: Type.String({ description: 'The template the chain starts from (`default` is the built-in image)' }),
    node_id: Type.String({ description: 'The node that holds its files' }),
    vcpu_count: Type.Integer({ description: 'A VM started from it has these vCPUs' }),
    memory_mb: Type.Integer({ description: 'and this memory' }),
    disk_size_mb: Type.Integer({ description: 'Size of its root disk as the guest sees it' }),
    memory_bytes: Type.Integer({ description: 'Bytes its memory file takes on disk (what the VM held in RAM)' }),
    disk_bytes: Type.Integer({ description: 'Bytes its disk layer takes: only what the VM wrote since its parent' }),
    state_bytes: Type.Integer({ description: 'Bytes of device state' }),
    size_bytes: Type.Integer({ description: 'All of the above together' }),
    pause_ms: Type.Integer({ description: 'How long the VM was stopped while it was taken' }),
    duration_ms: Type.Integer({ description: 'How long taking it took' }),
    metadata: Type.Record(Type.String(), Type.String()),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'SnapshotRecord', title: 'SnapshotRecord' },
);

export const SnapshotIdParams = Type.Object({ snapshot_id: Type.String({ minLength: 1, maxLength: 64 }) });

export function toSnapshotRecord(snapshot: Snapshot): Static<typeof SnapshotRecord> {
  return {
    snapshot_id: snapshot.id,
    name: snapshot.name,
    status: snapshot.status,
    user_id: snapshot.userId,
    source_vm_id: snapshot.sourceVmId,
    parent_id: snapshot.parentId,
    template_id: snapshot.templateId,
    node_id: snapshot.nodeId,
    vcpu_count: snapshot.vcpuCount,
    memory_mb: snapshot.memoryMb,
    disk_size_mb: snapshot.diskSizeMb,
    memory_bytes: snapshot.memoryBytes,
    disk_bytes: snapshot.diskBytes,
    state_bytes: snapshot.stateBytes,
    size_bytes: snapshot.memoryBytes + snapshot.diskBytes + snapshot.stateBytes,
    pause_ms: snapshot.pauseMs,
    duration_ms: snapshot.durationMs,
    metadata: snapshot.metadata,
    created_at: snapshot.createdAt,
  };
}

export const SNAPSHOT_SCHEMAS = [SnapshotRecord];
