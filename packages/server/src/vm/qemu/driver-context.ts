/**
 * What the steps of the QEMU driver share: its options, its event emitter, the table of live VMs and the
 * host as `prepareHost` found it. `QemuDriver` owns one and hands it to each step (host preparation, the
 * start sequence, recovery, supervision).
 */
import type { EventEmitter } from 'node:events';
import type { AcceleratorRequest, AgentProbe, HostReport, VmDriverEvents } from '../vm-driver.ts';
import type { CgroupManager } from './cgroup.ts';
import type { LiveVm } from './live-vm.ts';
import type { NetworkGuardMonitor } from './network-guard.ts';
import type { SystemUser } from './vm-user.ts';

/** Options of `QemuDriver`; the caller fills them from its configuration (the driver reads no env). */
export interface QemuDriverOptions<C = void> {
  /** `auto` boots the kernel under KVM once per process and falls back to TCG when that fails. */
  accelerator: AcceleratorRequest;
  /** How to tell that a guest's agent is up; what it produces comes back with the VM (`StartedVm.agent`). */
  agentProbe: AgentProbe<C>;
  qemuBinary?: string;
  qemuImgBinary?: string;
  /**
   * The unprivileged user QEMU drops to (`-runas`), created if missing. Default `sandboxd-vm` when the
   * server runs as root; null runs QEMU as the server's user (no network guard then).
   */
  vmUser?: string | null;
  /** Per-VM cgroups (default on). */
  resourceLimits?: {
    enabled?: boolean;
    /** See `DetectCgroupsOptions.parent`. */
    cgroupParent?: string;
    /** QEMU's own memory on top of the guest's: device emulation, and under TCG the translated code. */
    memoryOverheadMb?: number;
    pidsMax?: number;
    /**
     * CPUs no single VM may take from the host (default 0.5): each VM's CPU cap is min(vCPUs, host CPUs − this),
     * so one guest busy on all its vCPUs leaves the server and the other VMs this much of the machine.
     */
    hostCpuReserve?: number;
    /** CPU weight of the VMs' parent cgroup against its siblings (see `DetectCgroupsOptions.cpuWeight`). */
    cpuWeight?: number;
  };
  /** The nftables guard against guests reaching the host (default on when QEMU runs as `vmUser`). */
  networkGuard?: {
    enabled?: boolean;
    /**
     * Refuse to start VMs with user networking while the guard is not active (default true: it fails closed).
     * false only where the operator accepts guests that reach the host's loopback and private networks.
     */
    required?: boolean;
    /** How often the guard is re-checked (and re-installed when a firewall reload removed it); default 10 s. */
    recheckIntervalMs?: number;
    dnsServers?: string[];
    blockedIpv4?: string[];
    blockedIpv6?: string[];
    nftBinary?: string;
    /** The guard's nftables table (default `sandboxd_guard`). */
    table?: string;
  };
  /** QEMU's seccomp filter (default on). */
  seccomp?: boolean;
  /**
   * TCG's translated-code cache per VM, MiB (default `TCG_TRANSLATION_CACHE_MB`): touched as the guest's code is
   * translated, so it is most of an idle TCG VM's own memory; a smaller one is flushed and refilled more often.
   */
  tcgCacheMb?: number;
  /** Cap of each console log; a guest printing endlessly must not fill the disk. Default 4 MiB. */
  consoleLogMaxBytes?: number;
  /** Budget of the KVM self-test boot. */
  kvmTestTimeoutMs?: number;
  /** Default deadline of `boot` (default 180 s under TCG, 30 s under KVM). */
  bootTimeoutMs?: number;
  /** Default deadline of `restore` (default 60 s under TCG, 15 s under KVM). */
  restoreTimeoutMs?: number;
  /**
   * Let a VM run while `captureSnapshot` copies its memory (it stops only for the last pages). Default: under KVM
   * only. Under TCG, QEMU 7.2 loses some of the writes a running guest makes during the copy, and clones of such
   * captures crashed (see `capture.ts`), so there the guest is stopped for the copy.
   */
  liveCapture?: boolean;
}

/** The host as `prepareHost` found it. */
export interface PreparedHost {
  report: HostReport;
  qemuVersion: string;
  vmUser: SystemUser | null;
  cgroups: CgroupManager | null;
  /** The most CPU one VM may use, in CPUs (host CPUs − the reserve); a VM gets the lesser of this and its vCPUs. */
  vmCpuCeiling: number;
  /** Watches the network guard (null when there is none to watch: disabled, or no VM user). */
  guard: NetworkGuardMonitor | null;
}

/** The driver's shared state, handed to each step. */
export interface DriverContext<C> {
  readonly options: QemuDriverOptions<C>;
  readonly qemuBinary: string;
  readonly qemuImgBinary: string;
  readonly events: EventEmitter<VmDriverEvents>;
  /** Every VM from spawn (or adoption) until its files are gone. */
  readonly live: Map<string, LiveVm>;
  /** Starts supervising a VM and adds it to `live`. */
  register(vm: LiveVm): void;
  /** Emits a `warning` event. */
  warn(code: string, message: string, vmId?: string): void;
}
