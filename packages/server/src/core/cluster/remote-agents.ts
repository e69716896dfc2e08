/**
 * Agents of VMs that run on other nodes (see agent-rpc.ts): built from the VM's row, reaching its node at the
 * internal URL the node registered. A node that is not live answers VM_UNAVAILABLE at once: its VMs are about to
 * be (or were) recorded lost, and the session's next request starts a new VM.
 */
import { AppError } from '../errors.ts';
import type { Vm } from '../model.ts';
import type { GuestAgent } from '../vm-engine.ts';
import type { Database } from '../../store/database.ts';
import { findNode } from '../../store/nodes-store.ts';
import { RemoteGuestAgent } from './agent-rpc.ts';
import type { InternalAuth } from './internal-auth.ts';

export class RemoteAgents {
  constructor(
    private readonly database: Database,
    private readonly auth: InternalAuth,
  ) {}

  agentOf(vm: Pick<Vm, 'id' | 'nodeId'>): GuestAgent {
    return new RemoteGuestAgent(this.auth, () => this.internalUrlOf(vm.nodeId, vm.id), vm.id);
  }

  private async internalUrlOf(nodeId: string, vmId: string): Promise<string> {
    const node = await findNode(this.database.db, nodeId);
    if (!node || node.state !== 'live') {
      throw new AppError('VM_UNAVAILABLE', `VM ${vmId} runs on node ${nodeId}, which is ${node ? node.state : 'not registered'}: retry, or start a new VM`);
    }
    return node.internal_url;
  }
}
