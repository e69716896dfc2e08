/**
 * `egress.policy`: another node received a read (`policy` null) or a change of the egress policy of a VM this
 * node runs (its firewall rules, resolver and proxy are here). It runs with the principal that node
 * authenticated, so ownership is checked here again; a policy is normalized again as any this node enforces.
 */
import type { InternalCommandOf } from '../../../contract/cluster-commands.ts';
import type { EgressPolicyView } from '../../../core/egress-policy.ts';
import type { Services } from '../../../services.ts';

export function readOrSetEgressPolicy(services: Services, { principal, vm_id: vmId, policy }: InternalCommandOf<'egress.policy'>): Promise<EgressPolicyView> {
  const egress = services.sandbox.egress;
  return policy ? egress.setVmPolicy(principal, vmId, policy) : egress.getVmPolicy(principal, vmId);
}
