/**
 * What this node asks of the other nodes of the cluster, at the internal URL each registered, signed with the
 * cluster secret: the agents of VMs they run (see agent-rpc.ts), and new VMs placed on them. A node that is not
 * live answers VM_UNAVAILABLE at once: its VMs are about to be (or were) recorded lost, and the session's next
 * request starts a new VM.
 */
import type { Principal } from '../authenticator.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import type { Vm } from '../model.ts';
import type { GuestAgent } from '../vm-engine.ts';
import type { Database } from '../../store/database.ts';
import { findNode } from '../../store/nodes-store.ts';
import { RemoteGuestAgent } from './agent-rpc.ts';
import type { InternalAuth } from './internal-auth.ts';

/** Where another node starts a VM placed on it (an internal route, hidden from the OpenAPI document). */
export const REMOTE_START_PATH = '/internal/v1/vms/start';

/** Longest a remote start may take: a restore queued behind others, or the first snapshot of a template. */
const START_TIMEOUT_MS = 600_000;

/** What a VM placed on another node starts with (its session's source, which that node resolves itself). */
export interface RemoteVmSpec {
  vcpuCount: number;
  memoryMb: number;
  lifetimeSeconds: number;
  name?: string | null;
  metadata?: Record<string, string>;
}

export class RemoteNodes {
  constructor(
    private readonly database: Database,
    private readonly auth: InternalAuth,
  ) {}

  agentOf(vm: Pick<Vm, 'id' | 'nodeId'>): GuestAgent {
    return new RemoteGuestAgent(this.auth, () => this.internalUrlOf(vm.nodeId, `VM ${vm.id} runs on node ${vm.nodeId}`), vm.id);
  }

  /**
   * Starts the session's VM on node `nodeId` (placement chose it): that node runs the same acquisition as a local
   * one (quota, reservation, restore, events) and answers the VM's id once it is active.
   */
  async startVm(nodeId: string, principal: Principal, sessionId: string, spec: RemoteVmSpec): Promise<string> {
    const baseUrl = await this.internalUrlOf(nodeId, `a new VM was placed on node ${nodeId}`);
    const body = JSON.stringify({ principal, session_id: sessionId, spec });
    let response: Response;
    try {
      response = await fetch(new URL(REMOTE_START_PATH, baseUrl), {
        method: 'POST',
        headers: { ...this.auth.sign('POST', REMOTE_START_PATH), 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(START_TIMEOUT_MS),
      });
    } catch (error) {
      throw new AppError('VM_UNAVAILABLE', `node ${nodeId} could not be reached to start a VM: ${(error as Error).message}`);
    }
    const answer = (await response.json().catch(() => ({}))) as { vm_id?: string; code?: string; detail?: string };
    if (response.ok && answer.vm_id) return answer.vm_id;
    throw new AppError((answer.code ?? 'VM_UNAVAILABLE') as ErrorCode, answer.detail ?? `node ${nodeId} answered ${response.status} to a VM start`);
  }

  private async internalUrlOf(nodeId: string, what: string): Promise<string> {
    const node = await findNode(this.database.db, nodeId);
    if (!node || node.state !== 'live') throw new AppError('VM_UNAVAILABLE', `${what}, which is ${node ? node.state : 'not registered'}: retry, or start a new VM`);
    return node.internal_url;
  }
}
