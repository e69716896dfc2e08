/**
 * `vm.resume`: another node was asked to resume a paused VM but is drained or full (core/cluster/placement.ts), so
 * it asks this one. The VM is resumed here exactly as a local resume (quota in the shared store, the pause fetched
 * from the cluster's object store, events, ready steps) for the principal the sending node authenticated; the answer
 * is its id once it is active.
 */
import type { InternalCommandOf } from '../../../contract/cluster-commands.ts';
import type { Services } from '../../../services.ts';

export async function resumePlacedVm(services: Services, { principal, vm_id: vmId, auto }: InternalCommandOf<'vm.resume'>): Promise<{ vm_id: string }> {
  const live = await services.sandbox.vms.resumePlacedHere(principal, vmId, auto === true);
  return { vm_id: live.vm.id };
}
