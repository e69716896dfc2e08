/**
 * Where a new VM runs: on this node unless it is drained or full, else on the least-loaded live node that is
 * not drained, has room and has the template; when every node is full, on this one (its engine queues). One read of the node table and one of the VM rows (live VMs
 * per node, fresher than heartbeats); no reservation: two placements racing for a node's last slot may both
 * land there, and that node's engine queues the second (its restore admission), which is what a single node
 * does anyway. A node whose heartbeat is older than the dead-after time is not chosen even before it is
 * declared dead.
 */
import { AppError } from '../errors.ts';
import type { Clock } from '../clock.ts';
import type { Database } from '../../store/database.ts';
import { listNodes, type ClusterNodeRow } from '../../store/nodes-store.ts';
import { liveLoadByNode } from '../../store/vms-store.ts';

export interface PlacementRequest {
  vcpuCount: number;
  memoryMb: number;
  /** The template it starts from (a node lists the templates whose files it has). */
  templateId: string;
}

export class Placement {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly selfId: string,
    private readonly deadAfterMs: number,
  ) {}

  /** The node to start the VM on (this one when it can), or SERVICE_UNAVAILABLE when no node can. */
  async choose(request: PlacementRequest): Promise<string> {
    const nodes = await listNodes(this.database.db);
    const freshSince = this.clock.now().getTime() - this.deadAfterMs;
    const open = (node: ClusterNodeRow) => node.state === 'live' && node.drained === 0 && Date.parse(node.heartbeat_at) >= freshSince;
    const self = nodes.find((node) => node.id === this.selfId);
    // No other node could take it (a single node, or the others closed): no need to weigh loads.
    if (!nodes.some((node) => node.id !== this.selfId && open(node))) {
      if (!self || open(self)) return this.selfId;
      throw this.nowhere(self, request);
    }
    const load = await liveLoadByNode(this.database.db);
    const usage = (node: ClusterNodeRow) => load.get(node.id) ?? { vms: 0, vcpus: 0, memoryMb: 0 };
    const fits = (node: ClusterNodeRow) => {
      const used = usage(node);
      return used.vms + 1 <= node.vm_slots && used.vcpus + request.vcpuCount <= node.vcpus && used.memoryMb + request.memoryMb <= node.memory_mb;
    };
    // This node has the template whenever it can build or load it (the engine makes its snapshot on first use).
    if (!self || (open(self) && fits(self))) return this.selfId;
    const candidates = nodes
      .filter((node) => node.id !== this.selfId && open(node) && fits(node) && (JSON.parse(node.templates) as string[]).includes(request.templateId))
      .sort((a, b) => usage(a).vcpus / a.vcpus - usage(b).vcpus / b.vcpus || usage(a).vms / a.vm_slots - usage(b).vms / b.vm_slots || a.id.localeCompare(b.id));
    if (candidates[0]) return candidates[0].id;
    // Full everywhere: this node takes it anyway and its engine queues the restore, as a single node does
    // (capacity steers placement; it is not a hard limit, VMs' vCPUs are overcommitted).
    if (open(self)) return this.selfId;
    throw this.nowhere(self, request);
  }

  private nowhere(self: ClusterNodeRow, request: PlacementRequest): AppError {
    return new AppError(
      'SERVICE_UNAVAILABLE',
      `no node can start a VM now: this node (${this.selfId}) is ${self.drained ? 'drained' : self.state}, and no other live node that is not drained has room for ${request.vcpuCount} vCPUs and ${request.memoryMb} MiB of template ${request.templateId}; retry later`,
    );
  }
}
