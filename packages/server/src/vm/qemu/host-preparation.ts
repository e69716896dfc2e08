/**
 * Host preparation, once per driver: QEMU's version, the accelerator (a KVM self-test boot with a TCG
 * fallback), the unprivileged VM user and seccomp, per-VM cgroups and the network guard. Each protection that
 * is missing comes back in the host report with its reason, and as a `warning` event.
 */
import { availableParallelism } from 'node:os';
import type { GuestImageFiles, HostReport } from '../vm-driver.ts';
import { VmError } from '../vm-errors.ts';
import { resolveAccelerator } from './accel-probe.ts';
import { detectCgroups, type CgroupManager } from './cgroup.ts';
import { seccompPolicy, snapshotCompatibilityKey } from './command-line.ts';
import type { DriverContext, PreparedHost } from './driver-context.ts';
import { runProgram } from '../../host/run-program.ts';
import { installNetworkGuard, NetworkGuardMonitor } from './network-guard.ts';
import { DEFAULT_VM_USER, ensureVmUser, type SystemUser } from './vm-user.ts';

/**
 * CPUs no single VM may take (see `QemuDriverOptions.resourceLimits.hostCpuReserve`). Half a CPU: on a 2-CPU
 * host a 2-vCPU guest busy on both gets 1.5 and the server keeps answering (measurements in `../README.md`).
 */
const DEFAULT_HOST_CPU_RESERVE = 0.5;
/** The least CPU cap a VM may have: below it a guest cannot even run its agent in time. */
const MIN_VM_CPU = 0.1;

/** Checks the host and sets up what VMs need on it; `image` is booted by the KVM self-test. */
export async function prepareHost<C>(ctx: DriverContext<C>, image: GuestImageFiles): Promise<PreparedHost> {
  const { options } = ctx;
  let qemuVersion: string;
  try {
    const { stdout } = await runProgram(ctx.qemuBinary, ['--version']);
    qemuVersion = /version (\S+)/.exec(stdout)?.[1] ?? stdout.split('\n')[0]!.trim();
  } catch (error) {
    throw new VmError('VM_HOST_UNSUPPORTED', `cannot run ${ctx.qemuBinary}: ${(error as Error).message}`, { cause: error });
  }
  let verdict;
  try {
    verdict = await resolveAccelerator({ request: options.accelerator, qemuBinary: ctx.qemuBinary, image, timeoutMs: options.kvmTestTimeoutMs });
  } catch (error) {
    throw new VmError('VM_HOST_UNSUPPORTED', (error as Error).message, { cause: error });
  }
  if (verdict.fallbackReason) ctx.warn('ACCELERATOR_FALLBACK', verdict.fallbackReason);

  const isRoot = process.getuid?.() === 0;
  const userName = options.vmUser === undefined ? (isRoot ? DEFAULT_VM_USER : null) : options.vmUser;
  let vmUser: SystemUser | null = null;
  let sandboxDetail: string;
  if (userName && !isRoot) sandboxDetail = `QEMU runs as the server's user: switching to ${userName} needs root`;
  else if (userName) {
    vmUser = await ensureVmUser(userName);
    sandboxDetail = `QEMU drops to user ${vmUser.name} (uid ${vmUser.uid})`;
  } else sandboxDetail = "QEMU runs as the server's user";
  const seccomp = options.seccomp !== false;
  sandboxDetail += seccomp ? `; seccomp ${seccompPolicy(vmUser !== null)}` : '; no seccomp filter';
  const processSandbox = { active: vmUser !== null && seccomp, detail: sandboxDetail };
  if (!processSandbox.active) ctx.warn('PROCESS_SANDBOX_INCOMPLETE', sandboxDetail);

  const hostCpus = availableParallelism();
  const reserve = options.resourceLimits?.hostCpuReserve ?? DEFAULT_HOST_CPU_RESERVE;
  const vmCpuCeiling = hostCpus - reserve;
  if (!(reserve >= 0) || vmCpuCeiling < MIN_VM_CPU) {
    throw new VmError('VM_HOST_UNSUPPORTED', `a host CPU reserve of ${reserve} leaves VMs less than ${MIN_VM_CPU} of this host's ${hostCpus} CPUs: lower it`);
  }
  let cgroups: CgroupManager | null = null;
  let resourceLimits: HostReport['resourceLimits'];
  if (options.resourceLimits?.enabled === false) resourceLimits = { active: false, detail: 'disabled by configuration' };
  else if (!isRoot) resourceLimits = { active: false, detail: 'per-VM cgroups need root' };
  else {
    const detection = await detectCgroups({ parent: options.resourceLimits?.cgroupParent, cpuWeight: options.resourceLimits?.cpuWeight });
    cgroups = detection.manager;
    resourceLimits = cgroups
      ? { active: true, detail: `${cgroups.detail}; each VM at most min(vCPUs, ${vmCpuCeiling}) CPUs (${hostCpus} host CPUs, ${reserve} reserved)` }
      : { active: false, detail: detection.reason! };
  }
  if (!resourceLimits.active) ctx.warn('RESOURCE_LIMITS_UNAVAILABLE', `VMs run without CPU/memory limits: ${resourceLimits.detail}`);

  let networkGuard: HostReport['networkGuard'];
  let guard: NetworkGuardMonitor | null = null;
  const { enabled, required, recheckIntervalMs, ...guardSettings } = options.networkGuard ?? {};
  // Without the guard a guest reaches the host's loopback (the API, the database) and private networks.
  const consequence = required === false ? "guests with user networking can reach the host's loopback" : 'VMs with user networking will not start';
  if (enabled === false) networkGuard = { active: false, detail: 'disabled by configuration' };
  else if (!vmUser) networkGuard = { active: false, detail: 'needs QEMU to run as its own user (vmUser), which needs root' };
  else {
    const guardOptions = { uid: vmUser.uid, ...guardSettings };
    networkGuard = await installNetworkGuard(guardOptions);
    guard = new NetworkGuardMonitor(
      guardOptions,
      networkGuard,
      (status) =>
        status.active
          ? ctx.warn('NETWORK_GUARD_RESTORED', `the network guard is active again: ${status.detail}`)
          : ctx.warn('NETWORK_GUARD_INACTIVE', `${consequence}: ${status.detail}`),
      recheckIntervalMs,
    );
    guard.start();
  }
  if (!networkGuard.active) ctx.warn('NETWORK_GUARD_INACTIVE', `${consequence}: ${networkGuard.detail}`);

  return {
    qemuVersion,
    vmUser,
    cgroups,
    vmCpuCeiling,
    guard,
    report: {
      accelerator: verdict.accelerator,
      acceleratorFallbackReason: verdict.fallbackReason,
      resourceLimits,
      networkGuard,
      processSandbox,
      snapshotKey: snapshotCompatibilityKey(verdict.accelerator, qemuVersion),
    },
  };
}
