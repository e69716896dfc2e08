/** VMs: start one (for a session, with volumes), list, get and kill them. */
import type { VmRecord } from '../api-types.ts';
import type { Transport } from '../transport.ts';

/** A persistent volume for a new VM to mount at `mountPath` (absolute). */
export interface VmVolumeMount {
  volumeId: string;
  mountPath: string;
  /** Writes fail; other VMs may mount it read-only too. Default false: no other VM may mount it meanwhile. */
  readOnly?: boolean;
}

export interface VmCreateOptions {
  /** Bind it to this session (which must have no VM running); default: a new session. */
  sessionId?: string;
  vcpuCount?: 1 | 2 | 4 | 6 | 8;
  memoryMb?: number;
  vmLifetimeSeconds?: number;
  /** Of the VM (and of the new session, when one is made). */
  metadata?: Record<string, string>;
  /** Persistent volumes to mount (at most 4). A VM with volumes cannot be snapshotted, cloned or paused. */
  volumes?: VmVolumeMount[];
}

export class Vms {
  constructor(private readonly transport: Transport) {}

  /** Starts a VM, for a session that has none running or a new one (defaults: the session's settings). */
  async create(options: VmCreateOptions = {}): Promise<VmRecord> {
    return this.transport.call('/v1/vms', 'post', {
      json: {
        ...(options.sessionId !== undefined ? { session_id: options.sessionId } : {}),
        ...(options.vcpuCount !== undefined ? { vcpu_count: options.vcpuCount } : {}),
        ...(options.memoryMb !== undefined ? { memory_mb: options.memoryMb } : {}),
        ...(options.vmLifetimeSeconds !== undefined ? { vm_lifetime_seconds: options.vmLifetimeSeconds } : {}),
        ...(options.metadata ? { metadata: options.metadata } : {}),
        ...(options.volumes ? { volumes: options.volumes.map((v) => ({ volume_id: v.volumeId, mount_path: v.mountPath, read_only: v.readOnly ?? false })) } : {}),
      },
    });
  }

  async list(options: { status?: 'starting' | 'active' | 'killed'; limit?: number } = {}): Promise<VmRecord[]> {
    return this.transport.call('/v1/vms', 'get', { query: { status: options.status, limit: options.limit } });
  }

  async get(vmId: string): Promise<VmRecord> {
    return this.transport.call('/v1/vms/{vm_id}', 'get', { params: { vm_id: vmId } });
  }

  /** Kills the VM. */
  async delete(vmId: string) {
    return this.transport.call('/v1/vms/{vm_id}', 'delete', { params: { vm_id: vmId } });
  }
}
