/**
 * Changing a VM's lifetime after it started (E2B's `setTimeout`): the VM now ends `seconds` from now, earlier or
 * later than it would have. A running VM's deadline lives with its engine, on its node (moved there first, so that
 * a VM which ends meanwhile is never recorded with a deadline it no longer has); a paused VM keeps what is left
 * of its lifetime in its record and starts counting it down again when it resumes.
 */
import type { Vm } from '../../model.ts';
import { findVm, transitionVm } from '../../store/vms-store.ts';
import { AppError } from '../errors.ts';
import type { VmCluster } from './cluster.ts';
import type { VmServiceDeps } from './types.ts';

/** The longest lifetime a VM may be given from now: the longest it may be created with (30 days). */
export const MAX_LIFETIME_SECONDS = 30 * 24 * 3600;

export async function setVmLifetime(deps: VmServiceDeps, cluster: VmCluster, vm: Vm, seconds: number): Promise<Vm> {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_LIFETIME_SECONDS) {
    throw new AppError('BAD_REQUEST', `a lifetime is 1 to ${MAX_LIFETIME_SECONDS} seconds from now`);
  }
  const { database, engine, clock } = deps;
  if (vm.status === 'paused') {
    // Its record is all there is of it until it resumes, on whichever node: no node needs to be asked.
    const paused = await transitionVm(database.db, vm.id, ['paused'], { remainingSeconds: seconds });
    return paused ?? unchanged(deps, vm);
  }
  if (vm.status !== 'active') throw new AppError('CONFLICT', `VM ${vm.id} is ${vm.status}: only a running or paused VM's lifetime can change`);
  cluster.assertLocal(vm);
  const expiresAt = new Date(clock.now().getTime() + seconds * 1000);
  if (!engine.setDeadline(vm.id, expiresAt)) throw new AppError('CONFLICT', `VM ${vm.id} is ending`);
  const moved = await transitionVm(database.db, vm.id, ['active'], { expiresAt: expiresAt.toISOString() });
  return moved ?? unchanged(deps, vm);
}

/** The VM changed state while its lifetime was being set: say what it is now. */
async function unchanged(deps: VmServiceDeps, vm: Vm): Promise<never> {
  const now = await findVm(deps.database.db, vm.id);
  throw new AppError('CONFLICT', `VM ${vm.id} is ${now?.status ?? 'gone'}: its lifetime was not changed`);
}
