/**
 * `vm.start`: another node placed a session's new VM on this one (core/cluster/placement.ts). The VM is acquired
 * here exactly as a local one (quota in the shared store, reservation, restore, events, ready steps) for the
 * principal the sending node authenticated; the answer is its id once it is active.
 */
import type { InternalCommandOf } from '../../../contract/cluster-commands.ts';
import type { Services } from '../../../services.ts';

export async function startPlacedVm(services: Services, { principal, session_id: sessionId, spec }: InternalCommandOf<'vm.start'>): Promise<{ vm_id: string }> {
  const session = await services.sandbox.sessions.getOwned(principal, sessionId);
  // Validated again here, as any policy this node enforces (the sender normalized it too).
  const { egressPolicy, ...rest } = spec;
  const live = await services.sandbox.vms.startPlacedHere(principal, session, {
    ...rest,
    ...(egressPolicy ? { egressPolicy: services.sandbox.egress.normalize(egressPolicy) } : {}),
  });
  return { vm_id: live.vm.id };
}
