/**
 * This node's place in the deployment: it registers itself in the store (capacity, internal address), then
 * heartbeats with its load. Every heartbeat also looks for nodes that stopped heartbeating: a node silent for
 * longer than `deadAfterMs` is declared dead by whichever node notices first (one conditional UPDATE, so
 * exactly one does), and that node records the dead node's VMs lost. Nothing here needs a leader or a
 * message bus: the store is the only thing nodes share. A single-node deployment runs the same code with
 * one row.
 *
 * A node that finds itself declared dead (it was paused or cut off for longer than the timeout while its VMs
 * were recorded lost) kills those VMs, then registers again: a node never runs VMs the store does not count.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { BackgroundFailures } from '../background-timers.ts';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import type { Database } from '../../store/database.ts';
import {
  declareDeadNodes,
  findNode,
  heartbeatNode,
  listNodes,
  markNodeLeft,
  updateNodeDrain,
  upsertNode,
  type ClusterNodeRow,
} from '../../store/nodes-store.ts';

export interface NodeCapacity {
  vcpus: number;
  memoryMb: number;
  /** VMs this node runs at most. */
  vmSlots: number;
}

export interface NodeLoad {
  runningVms: number;
  usedVcpus: number;
  usedMemoryMb: number;
}

export type NodeState = 'live' | 'dead' | 'left';
export type DeploymentDrainState = 'draining' | 'done' | 'cancelled';

/** A node as the API and placement see it. */
export interface ClusterNode {
  id: string;
  internalUrl: string;
  state: NodeState;
  drained: boolean;
  deploymentDrain: DeploymentDrainState | null;
  capacity: NodeCapacity;
  load: NodeLoad;
  templates: string[];
  version: string;
  startedAt: string;
  heartbeatAt: string;
  deadAt: string | null;
}

export interface NodeRegistryOptions {
  nodeId: string;
  /** Where the other nodes reach this one; empty until the internal listener is bound (see `internalUrl`). */
  internalUrl: string;
  capacity: NodeCapacity;
  version: string;
  heartbeatMs: number;
  deadAfterMs: number;
  /** What this node runs now (from the store's VM rows). */
  load(): Promise<NodeLoad>;
  /** Template ids whose files this node has (placement prefers them). */
  templates(): string[];
  /** Records the VMs of every dead node lost (idempotent). */
  recordLostVms(): Promise<number>;
  /** This node was declared dead while it ran: kill what the store no longer counts. */
  onSelfDeclaredDead(): Promise<void>;
  /** Where a failed heartbeat is reported (`cluster_heartbeat`); without it, it is logged here. */
  failures?: BackgroundFailures;
}

export function toClusterNode(row: ClusterNodeRow): ClusterNode {
  return {
    id: row.id,
    internalUrl: row.internal_url,
    state: row.state as NodeState,
    drained: row.drained === 1,
    deploymentDrain: row.deployment_drain as DeploymentDrainState | null,
    capacity: { vcpus: row.vcpus, memoryMb: row.memory_mb, vmSlots: row.vm_slots },
    load: { runningVms: row.running_vms, usedVcpus: row.used_vcpus, usedMemoryMb: row.used_memory_mb },
    templates: JSON.parse(row.templates) as string[],
    version: row.version,
    startedAt: row.started_at,
    heartbeatAt: row.heartbeat_at,
    deadAt: row.dead_at,
  };
}

export class NodeRegistry {
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;
  /**
   * The internal URL this node registers: the configured one, or the internal listener's own address, set once
   * it is bound (before `start`), since its port may be chosen at bind time.
   */
  internalUrl: string;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly options: NodeRegistryOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    this.internalUrl = options.internalUrl;
  }

  get nodeId(): string {
    return this.options.nodeId;
  }

  /** Registers this node (again, after a restart) and starts heartbeating. */
  async start(): Promise<void> {
    await this.register();
    this.timer = setInterval(() => void this.beat(), this.options.heartbeatMs);
    this.timer.unref();
  }

  /** A clean shutdown: the node is `left`, not dead, and no longer placed on. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await markNodeLeft(this.database.db, this.options.nodeId, this.clock.now().toISOString());
  }

  /** One heartbeat and one look for dead nodes (the timer's work; callable directly, e.g. by tests). */
  beat(): Promise<void> {
    // Beats never overlap: a slow store delays the next one instead of piling up.
    this.beating ??= this.beatOnce()
      .catch((error: unknown) =>
        this.options.failures ? this.options.failures.report('cluster_heartbeat', error) : this.log.warn({ err: error }, 'cluster heartbeat failed'),
      )
      .finally(() => (this.beating = null));
    return this.beating;
  }

  async list(): Promise<ClusterNode[]> {
    return (await listNodes(this.database.db)).map(toClusterNode);
  }

  async get(nodeId: string): Promise<ClusterNode> {
    const row = await findNode(this.database.db, nodeId);
    if (!row) throw new AppError('NOT_FOUND', `no node ${nodeId} in this cluster`);
    return toClusterNode(row);
  }

  /** Drain mode on or off: a drained node takes no new VMs; the ones it runs go on until they end. */
  setDrained(nodeId: string, drained: boolean): Promise<ClusterNode> {
    return this.updateDrain(nodeId, { drained: drained ? 1 : 0, ...(drained ? {} : { deployment_drain: null }) });
  }

  /** Sets a node's deployment-drain state (the deployment drain's own logic decides when). */
  setDeploymentDrain(nodeId: string, state: DeploymentDrainState | null, drained: boolean): Promise<ClusterNode> {
    return this.updateDrain(nodeId, { deployment_drain: state, drained: drained ? 1 : 0 });
  }

  private async updateDrain(nodeId: string, changes: Parameters<typeof updateNodeDrain>[2]): Promise<ClusterNode> {
    const row = await updateNodeDrain(this.database.db, nodeId, changes);
    if (!row) throw new AppError('NOT_FOUND', `no node ${nodeId} in this cluster`);
    return toClusterNode(row);
  }

  private async register(): Promise<void> {
    const now = this.clock.now().toISOString();
    const load = await this.options.load();
    const { capacity } = this.options;
    await upsertNode(this.database.db, {
      id: this.options.nodeId,
      internal_url: this.internalUrl,
      state: 'live',
      drained: 0,
      deployment_drain: null,
      vcpus: capacity.vcpus,
      memory_mb: capacity.memoryMb,
      vm_slots: capacity.vmSlots,
      templates: JSON.stringify(this.options.templates()),
      running_vms: load.runningVms,
      used_vcpus: load.usedVcpus,
      used_memory_mb: load.usedMemoryMb,
      version: this.options.version,
      started_at: now,
      heartbeat_at: now,
      dead_at: null,
    });
  }

  private async beatOnce(): Promise<void> {
    const now = this.clock.now();
    const load = await this.options.load();
    const alive = await heartbeatNode(this.database.db, this.options.nodeId, now.toISOString(), {
      running_vms: load.runningVms,
      used_vcpus: load.usedVcpus,
      used_memory_mb: load.usedMemoryMb,
      templates: JSON.stringify(this.options.templates()),
    });
    if (!alive) {
      this.log.warn({ node: this.options.nodeId }, 'this node was declared dead while it ran (its VMs were recorded lost): killing them and registering again');
      await this.options.onSelfDeclaredDead();
      await this.register();
    }
    const cutoff = new Date(now.getTime() - this.options.deadAfterMs).toISOString();
    for (const nodeId of await declareDeadNodes(this.database.db, cutoff, now.toISOString())) {
      this.log.warn({ node: nodeId, silentForMs: this.options.deadAfterMs }, 'node declared dead: its VMs are recorded lost');
    }
    // The VMs of every dead node, not only of those declared just now (one query; recording an end is
    // idempotent): a node that crashed between declaring and recording must not leave them counted live.
    const lost = await this.options.recordLostVms();
    if (lost > 0) this.log.warn({ vms: lost }, 'VMs of dead nodes recorded lost');
  }
}
