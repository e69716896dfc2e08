/**
 * The words the parts of the VM service share: a session's live VM, what a new VM is made of, what the service
 * depends on, and the hooks it runs for others.
 */
import type { BackgroundFailures } from '../background-timers.ts';
import type { Clock } from '../clock.ts';
import type { EventNotifier } from '../events.ts';
import type { PlanLimiter } from '../limits.ts';
import type { EgressPolicy } from '../egress-policy.ts';
import type { EgressTarget, GuestAgent, VmEngine } from '../vm-engine.ts';
import type { ResolvedSource, VmSources } from '../vm-sources.ts';
import type { RemoteNodes } from '../cluster/remote-nodes.ts';
import type { Placement } from '../cluster/placement.ts';
import type { KillQueue } from '../cluster/kill-queue.ts';
import type { LifecycleHooks, OnExpiry, PreStopHook, PreStopTrigger, Session, Vm } from '../../model.ts';
import type { Database } from '../../store/database.ts';
import type { VolumeRequest } from '../volumes.ts';

/** What a new VM is made of (POST /v1/vms, a clone, a session's first use). */
export interface VmSpec {
  vcpuCount: number;
  memoryMb: number;
  lifetimeSeconds: number;
  /** What it starts from; default: its session's source. A snapshot fixes vCPUs and memory. */
  source?: ResolvedSource;
  name?: string | null;
  metadata?: Record<string, string>;
  /** Volumes to mount (checked and recorded with the reservation). */
  volumes?: VolumeRequest[];
  /** Its lifecycle hooks; default: its session's. */
  lifecycleHooks?: LifecycleHooks | null;
  /** Seconds of idleness after which it is paused (null: never); default: its session's. */
  autoPauseSeconds?: number | null;
  /** What it does when its lifetime ends; default: its session's. */
  onExpiry?: OnExpiry;
  /**
   * Its own egress policy (normalized; default: its session's). Stored with the reservation, in the same
   * transaction, on whichever node starts the VM: the network hook reads it there before the VM runs.
   */
  egressPolicy?: EgressPolicy;
  /** Called once the VM is reserved in the store ('starting'), before the engine starts it. */
  onReserved?: (vm: Vm) => void;
}

/** A session's live VM with its agent. */
export interface LiveVm {
  vm: Vm;
  agent: GuestAgent;
}

/** A step run right after a session gets a new VM, before anyone gets it (readiness.ts lists them in order). */
export type VmReadyHook = (session: Session, live: LiveVm) => Promise<void>;

/**
 * Run before a starting VM can send anything (`AcquireVmRequest.prepareNetwork`): `new` for a VM just reserved,
 * `resumed` for a paused VM coming back. `target` is how the firewall knows its hypervisor (null: it cannot
 * here). A rejection fails the start.
 */
export type VmNetworkHook = (vm: Vm, kind: 'new' | 'resumed', target: EgressTarget | null) => Promise<void>;

/** Runs a VM's pre-stop hook in it and records the run (ExecutionService); bounded by the hook's timeout, never throws. */
export type PreStopRunner = (vm: Vm, agent: GuestAgent, hook: PreStopHook, stop: PreStopTrigger) => Promise<unknown>;

/** What the VM service and each of its parts work with. */
export interface VmServiceDeps {
  readonly database: Database;
  readonly engine: VmEngine;
  readonly limiter: PlanLimiter;
  readonly clock: Clock;
  readonly notifier: EventNotifier;
  readonly sources: VmSources;
  /** Agents of VMs on other nodes of the cluster, and VMs started there (null: every VM is on this node). */
  readonly remote: RemoteNodes | null;
  /** Where new VMs go (null: always this node). */
  readonly placement: Placement | null;
  /** Where kills of VMs on other nodes go (cluster mode). */
  readonly killQueue: KillQueue | null;
  /** Where work done beside a request reports its failures (a volume's upload after its VM ended). */
  readonly failures?: BackgroundFailures | null;
}

/** The Python context a VM's session code runs in (older records: the session's id). */
export function pythonContextOf(vm: Vm): string | null {
  return vm.pythonContext ?? vm.sessionId;
}
