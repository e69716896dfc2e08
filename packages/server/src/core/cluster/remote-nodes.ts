/**
 * The port through which the core reaches the other nodes of the cluster (cluster/http-remote-nodes.ts): the
 * agent of a VM another node runs (streams, over the agent RPC), and one typed command for everything else a node
 * asks of another (contract/cluster-commands.ts: start a placed VM, resume a paused one, a VM's egress policy, a browser session's
 * call). A node that is not live answers VM_UNAVAILABLE at once: its VMs are about to be (or were) recorded lost,
 * and the session's next request starts a new VM. Errors of the owner come back as the AppError (or InputError)
 * it threw, so the caller's client sees what a local call would have given.
 */
import type { BrowserCallMethod, InternalCommand, VmStartSpec } from '../../contract/cluster-commands.ts';
import type { Vm } from '../../model.ts';
import type { Principal } from '../authenticator.ts';
import type { BrowserApi } from '../browser/browser-api.ts';
import type { EgressPolicy, EgressPolicyView } from '../egress-policy.ts';
import type { GuestAgent } from '../vm-engine.ts';

/** What each command answers, by op (a browser call: what the service's method answers). */
export type CommandAnswer<C extends InternalCommand> = C extends { op: 'vm.start' | 'vm.resume' }
  ? { vm_id: string }
  : C extends { op: 'egress.policy' }
    ? EgressPolicyView
    : C extends { op: 'browser.call'; call: { method: infer M extends BrowserCallMethod } }
      ? Awaited<ReturnType<BrowserApi[M]>>
      : never;

export interface RemoteNodes {
  /** The agent of a VM node `vm.nodeId` runs; each operation goes to that node when it starts. */
  agentOf(vm: Pick<Vm, 'id' | 'nodeId'>): GuestAgent;
  /** Runs `command` on node `nodeId` and answers what it answered there. */
  command<C extends InternalCommand>(nodeId: string, command: C): Promise<CommandAnswer<C>>;
}

/** True when A is assignable to B. */
type Assignable<A, B> = [A] extends [B] ? true : false;
type Expect<T extends true> = T;

/**
 * A compile error here means the command contract and the core's own types parted: what the core sends
 * (a principal, a policy, a VM's spec) must fit the schemas the receiver validates it with.
 */
export type CommandContractChecks = [
  Expect<Assignable<Principal, InternalCommand['principal']>>,
  Expect<Assignable<EgressPolicy, NonNullable<Extract<InternalCommand, { op: 'egress.policy' }>['policy']>>>,
  Expect<Assignable<InternalCommand['principal'], Principal>>,
  Expect<Assignable<VmStartSpec['egressPolicy'] & object, EgressPolicy>>,
];
