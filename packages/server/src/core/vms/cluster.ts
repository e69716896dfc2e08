/**
 * The VM service's side of the cluster: which node a VM is on, where a new one goes, a VM started or killed on its
 * owner, and the VMs of nodes declared dead. With the embedded store (no `remote`) every VM is on this node and
 * most of this answers "here".
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_TEMPLATE_ID, type Session, type Vm } from '../../model.ts';
import { findNode } from '../../store/nodes-store.ts';
import { findVm, listLiveVmsOfNode, listLiveVmsOnDeadNodes, liveLoadByNode } from '../../store/vms-store.ts';
import type { Principal } from '../authenticator.ts';
import { Ownership } from '../cluster/ownership.ts';
import { AppError } from '../errors.ts';
import type { GuestAgent } from '../vm-engine.ts';
import type { VmEnds } from './ends.ts';
import type { LiveVm, VmServiceDeps, VmSpec } from './types.ts';

/** How long POST /kill waits for the owner of a VM on another node to record its end. */
const REMOTE_KILL_WAIT_MS = 30_000;

export class VmCluster {
  /** "Here, or which node?" for VMs: the rule every service asks (core/cluster/ownership.ts), for the engine's node. */
  readonly ownership: Ownership;

  constructor(
    private readonly deps: VmServiceDeps,
    private readonly ends: VmEnds,
  ) {
    this.ownership = new Ownership(deps.engine.nodeId);
  }

  /** This node's id (the engine's). */
  get nodeId(): string {
    return this.ownership.nodeId;
  }

  isLocal(vm: Pick<Vm, 'nodeId'>): boolean {
    return this.ownership.isLocal(vm);
  }

  /** Whether a VM of another node can be reached through its owner (cluster mode). */
  get reachesOthers(): boolean {
    return this.deps.remote !== null;
  }

  /** The VM's process (or saved state) is on this node, else VM_UNAVAILABLE naming the node. */
  assertLocal(vm: Vm, what = `VM ${vm.id} runs`, advice?: string): void {
    this.ownership.assertLocal(vm, what, advice);
  }

  /**
   * A paused VM is resumed or discarded here: anywhere when its pause is in the cluster's object store, else only on
   * the node that paused it (VM_UNAVAILABLE naming it).
   */
  assertPauseReachable(vm: Vm): void {
    if (!this.deps.engine.portableCaptures) this.ownership.assertLocal(vm, `VM ${vm.id} is paused`);
  }

  /** The live agent of a VM row (through its owner when another node runs it), or null. */
  agentOf(vm: Vm): GuestAgent | null {
    if (vm.status !== 'active') return null;
    const { engine, remote } = this.deps;
    return this.ownership.onOwner(
      vm,
      () => engine.agent(vm.id),
      () => (remote ? remote.agentOf(vm) : null),
    );
  }

  /** The agent of a live VM another node runs (callers checked `reachesOthers`). */
  remoteAgentOf(vm: Vm): GuestAgent {
    return this.deps.remote!.agentOf(vm);
  }

  /**
   * Where a new VM of the session goes (placement.ts): another node when this one is drained or full (its id), else
   * null. VMs that start from something on this node's disk (a resolved snapshot or template, volumes) stay here.
   */
  async placeElsewhere(session: Session, requested: VmSpec): Promise<string | null> {
    const { placement, remote } = this.deps;
    if (!placement || !remote || requested.source || (requested.volumes?.length ?? 0) > 0 || session.source.kind !== 'template') return null;
    const nodeId = await placement.choose({ vcpuCount: requested.vcpuCount, memoryMb: requested.memoryMb, templateId: session.source.id });
    return this.ownership.isLocal(nodeId) ? null : nodeId;
  }

  /** Starts the session's new VM on node `nodeId` (through the same acquisition there) and reaches it from here. */
  async startElsewhere(nodeId: string, principal: Principal, session: Session, requested: VmSpec): Promise<LiveVm> {
    const remote = this.deps.remote!;
    const { vcpuCount, memoryMb, lifetimeSeconds, name, metadata } = requested;
    const spec = {
      vcpuCount,
      memoryMb,
      lifetimeSeconds,
      name: name ?? null,
      metadata: metadata ?? {},
      ...(requested.lifecycleHooks !== undefined ? { lifecycleHooks: requested.lifecycleHooks } : {}),
      ...(requested.egressPolicy ? { egressPolicy: requested.egressPolicy } : {}),
    };
    const { vm_id: vmId } = await remote.command(nodeId, { op: 'vm.start', principal, session_id: session.id, spec });
    const vm = await findVm(this.deps.database.db, vmId);
    if (!vm || vm.status !== 'active') throw new AppError('VM_UNAVAILABLE', `VM ${vmId} ended while it was starting on node ${nodeId}`);
    requested.onReserved?.(vm);
    return { vm, agent: remote.agentOf(vm) };
  }

  /**
   * Where a paused VM resumes when its pause is in the cluster's object store: another node when this one is
   * drained or full (its id), else null (here). A pause kept on its node resumes there.
   */
  async resumeElsewhere(vm: Vm): Promise<string | null> {
    const { placement, remote, engine } = this.deps;
    if (!placement || !remote || !engine.portableCaptures) return null;
    // Any node has the built-in template's files; the pause brings the rest.
    const nodeId = await placement.choose({ vcpuCount: vm.vcpuCount, memoryMb: vm.memoryMb, templateId: DEFAULT_TEMPLATE_ID });
    return this.ownership.isLocal(nodeId) ? null : nodeId;
  }

  /** Resumes a paused VM on node `nodeId` (the same resume there) and reaches it from here. */
  async resumeOn(nodeId: string, principal: Principal, vm: Vm, auto: boolean): Promise<LiveVm> {
    const remote = this.deps.remote!;
    await remote.command(nodeId, { op: 'vm.resume', principal, vm_id: vm.id, ...(auto ? { auto: true } : {}) });
    const row = await findVm(this.deps.database.db, vm.id);
    if (!row || row.status !== 'active') throw new AppError('VM_UNAVAILABLE', `VM ${vm.id} ended while it was resuming on node ${nodeId}`);
    return { vm: row, agent: remote.agentOf(row) };
  }

  /** Whether a kill of `vm` goes to its owner's queue rather than to this node's engine. */
  killsElsewhere(vm: Vm): boolean {
    return !this.isLocal(vm) && this.deps.killQueue !== null;
  }

  /**
   * A VM of another node: its kill goes to the owner's queue (the owner kills it and records the end), and the
   * answer waits for that record. A VM whose node is not live cannot be killed there: it is recorded lost.
   */
  async killElsewhere(vm: Vm): Promise<Vm> {
    const { database, killQueue } = this.deps;
    const node = await findNode(database.db, vm.nodeId);
    if (!node || node.state !== 'live') return (await this.ends.record(vm.id, 'node_lost')) ?? (await findVm(database.db, vm.id))!;
    await killQueue!.dispatch(vm.nodeId, { vmId: vm.id, from: this.nodeId });
    const deadline = Date.now() + REMOTE_KILL_WAIT_MS;
    for (;;) {
      const row = await findVm(database.db, vm.id);
      if (!row || row.status === 'killed') return row ?? vm;
      if (Date.now() > deadline) {
        throw new AppError(
          'VM_UNAVAILABLE',
          `the kill of VM ${vm.id} was dispatched to node ${vm.nodeId}'s queue but not confirmed within ${REMOTE_KILL_WAIT_MS / 1000} s; it will be carried out when that node works its queue`,
        );
      }
      await sleep(100);
    }
  }

  /** What a node (default this one) runs now, by the store (a node's heartbeat reports its own). */
  async nodeLoad(nodeId: string = this.nodeId): Promise<{ runningVms: number; usedVcpus: number; usedMemoryMb: number }> {
    const load = (await liveLoadByNode(this.deps.database.db, nodeId)).get(nodeId);
    return { runningVms: load?.vms ?? 0, usedVcpus: load?.vcpus ?? 0, usedMemoryMb: load?.memoryMb ?? 0 };
  }

  /**
   * VMs recorded live on nodes the cluster declared dead are recorded ended (`node_lost`, event `vm.lost`), so
   * their sessions start new VMs elsewhere and quotas free up. Idempotent (each end is recorded once, by
   * whichever node gets there first). Answers how many this call recorded.
   */
  async recordLostVms(): Promise<number> {
    const rows = await listLiveVmsOnDeadNodes(this.deps.database.db);
    const ended = await Promise.all(rows.map((row) => this.ends.record(row.id, 'node_lost')));
    return ended.filter(Boolean).length;
  }

  /**
   * This node was declared dead while it was running (a pause longer than the heartbeat timeout): the VMs the
   * store recorded lost must not run on unseen, so they are killed here. Answers how many.
   */
  async killForsaken(): Promise<number> {
    const { database, engine } = this.deps;
    const live = new Set((await listLiveVmsOfNode(database.db, this.nodeId)).map((vm) => vm.id));
    const forsaken = engine.liveVmIds().filter((id) => !live.has(id));
    await Promise.all(forsaken.map((id) => engine.kill(id)));
    return forsaken.length;
  }
}
