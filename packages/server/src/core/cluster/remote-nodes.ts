/**
 * What this node asks of the other nodes of the cluster, at the internal URL each registered (their internal
 * listener), each request signed with the cluster secret for that one node, body included (internal-auth.ts):
 * the agents of VMs they run (see agent-rpc.ts), and new VMs placed on them. A node that is not
 * live answers VM_UNAVAILABLE at once: its VMs are about to be (or were) recorded lost, and the session's next
 * request starts a new VM.
 */
import type { Principal } from '../authenticator.ts';
import { AppError, ERROR_CODES, InputError, type ErrorCode, type InputProblem } from '../errors.ts';
import type { EgressPolicy } from '../egress-policy.ts';
import type { LifecycleHooks, Vm } from '../model.ts';
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
  /** The VM's own lifecycle hooks (absent: its session's). */
  lifecycleHooks?: LifecycleHooks | null;
  /** The VM's own egress policy (absent: its session's), stored with its reservation on that node. */
  egressPolicy?: EgressPolicy;
}

export class RemoteNodes {
  constructor(
    private readonly database: Database,
    private readonly auth: InternalAuth,
  ) {}

  agentOf(vm: Pick<Vm, 'id' | 'nodeId'>): GuestAgent {
    return new RemoteGuestAgent(this.auth, vm.nodeId, () => this.internalUrlOf(vm.nodeId, `VM ${vm.id} runs on node ${vm.nodeId}`), vm.id);
  }

  /**
   * Starts the session's VM on node `nodeId` (placement chose it): that node runs the same acquisition as a local
   * one (quota, reservation, restore, events) and answers the VM's id once it is active.
   */
  async startVm(nodeId: string, principal: Principal, sessionId: string, spec: RemoteVmSpec): Promise<string> {
    const answer = await this.post<{ vm_id?: string }>(nodeId, REMOTE_START_PATH, { principal, session_id: sessionId, spec }, START_TIMEOUT_MS, 'a new VM was placed on');
    if (!answer.vm_id) throw new AppError('VM_UNAVAILABLE', `node ${nodeId} answered a VM start without a VM id`);
    return answer.vm_id;
  }

  /**
   * A signed JSON request to an internal route of node `nodeId`; its answer, or its error rebuilt as the same
   * AppError (or InputError: a 422's problems) so the caller's client sees what a local call would have given.
   */
  async post<T>(nodeId: string, internalPath: string, body: unknown, timeoutMs: number, what: string): Promise<T> {
    const baseUrl = await this.internalUrlOf(nodeId, `${what} node ${nodeId}`);
    // Signed as the exact bytes sent: the receiver hashes what it got (the principal travels in it).
    const json = JSON.stringify(body);
    let response: Response;
    try {
      response = await fetch(new URL(internalPath, baseUrl), {
        method: 'POST',
        headers: { ...this.auth.sign({ method: 'POST', pathWithQuery: internalPath, destination: nodeId, body: json }), 'content-type': 'application/json' },
        body: json,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new AppError('VM_UNAVAILABLE', `node ${nodeId} could not be reached (${what} it): ${(error as Error).message}`);
    }
    const answer = (await response.json().catch(() => ({}))) as T & { code?: string; detail?: unknown };
    if (response.ok) return answer;
    if (response.status === 422 && Array.isArray(answer.detail)) throw new InputError(answer.detail as InputProblem[]);
    const code = answer.code && answer.code in ERROR_CODES ? (answer.code as ErrorCode) : 'VM_UNAVAILABLE';
    throw new AppError(code, typeof answer.detail === 'string' ? answer.detail : `node ${nodeId} answered ${response.status} (${what} it)`);
  }

  private async internalUrlOf(nodeId: string, what: string): Promise<string> {
    const node = await findNode(this.database.db, nodeId);
    if (!node || node.state !== 'live') throw new AppError('VM_UNAVAILABLE', `${what}, which is ${node ? node.state : 'not registered'}: retry, or start a new VM`);
    return node.internal_url;
  }
}
