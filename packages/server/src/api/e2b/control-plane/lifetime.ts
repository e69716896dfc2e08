/**
 * How E2B's timeouts become sandboxd VM lifetimes. E2B counts a timeout in seconds from now; sandboxd's VM lifetime
 * may be set to 1 s .. 30 days from now once a VM runs (a new VM gets at least 20 s: create.ts). A timeout of 0
 * (the SDK rounds milliseconds up, so only an explicit 0) ends the sandbox a second from now.
 */
import type { Principal } from '../../../core/authenticator.ts';
import type { Vm } from '../../../model.ts';
import type { Services } from '../../../services.ts';

/** The longest lifetime sandboxd gives from now (core/vms/lifetime.ts's MAX_LIFETIME_SECONDS). */
const MAX_SECONDS = 30 * 24 * 3600;

/** Seconds a VM has left: until its expiry, or, while paused, what it kept when it was paused. */
export function secondsLeft(vm: Vm, now: Date): number {
  if (vm.status === 'paused') return vm.remainingSeconds ?? 0;
  return Math.max(0, (Date.parse(vm.expiresAt) - now.getTime()) / 1000);
}

/** The VM ends `seconds` from now (earlier or later than it would have): E2B's setTimeout. */
export async function setTimeoutOf(services: Services, principal: Principal, vm: Vm, seconds: number): Promise<Vm> {
  return services.sandbox.vms.setLifetime(principal, vm.id, Math.min(MAX_SECONDS, Math.max(1, seconds)));
}

/**
 * The VM lives at least `seconds` more, never less than it had (E2B's refresh, and connect's timeout on a running
 * sandbox). Answers the VM as it is now.
 */
export async function extendTimeoutOf(services: Services, principal: Principal, vm: Vm, seconds: number): Promise<Vm> {
  // A VM still starting has no deadline to move yet; it gets the lifetime it was asked for when it runs.
  if (vm.status === 'starting') return vm;
  if (secondsLeft(vm, services.clock.now()) >= seconds) return vm;
  return setTimeoutOf(services, principal, vm, seconds);
}
