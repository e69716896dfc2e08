/** VMs: bind a new VM to a session, list, get and kill them. */
import type { VmRecord } from '../api-types.ts';
import type { Transport } from '../transport.ts';

export interface VmCreateOptions {
  sessionId: string;
  vcpuCount?: 1 | 2 | 4 | 6 | 8;
  memoryMb?: number;
  vmLifetimeSeconds?: number;
}

export class Vms {
  constructor(private readonly transport: Transport) {}

  /** Starts a VM for a session that has none running (defaults: the session's settings). */
  async create(options: VmCreateOptions): Promise<VmRecord> {
    return this.transport.call('/v1/vms', 'post', {
      json: {
        session_id: options.sessionId,
        ...(options.vcpuCount !== undefined ? { vcpu_count: options.vcpuCount } : {}),
        ...(options.memoryMb !== undefined ? { memory_mb: options.memoryMb } : {}),
        ...(options.vmLifetimeSeconds !== undefined ? { vm_lifetime_seconds: options.vmLifetimeSeconds } : {}),
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
