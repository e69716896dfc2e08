/** Wire shapes of worker control (the admin listener's routes; the public listener documents and refuses them). */
import { Type } from 'typebox';
import type { ClusterNode } from '../../../core/cluster/node-registry.ts';

export const DEPLOYMENT_DRAIN_ACTIONS = ['start', 'status', 'cancel'] as const;
export type DeploymentDrainAction = (typeof DEPLOYMENT_DRAIN_ACTIONS)[number];

export const WorkerParams = Type.Object({ worker_id: Type.String({ minLength: 1, maxLength: 63, description: 'A node id (`SANDBOXD_NODE_ID`)' }) });

export const DeploymentDrainParams = Type.Object({
  worker_id: Type.String({ minLength: 1, maxLength: 63 }),
  action: Type.Union(
    DEPLOYMENT_DRAIN_ACTIONS.map((a) => Type.Literal(a)),
    {
      description: '`start`: stop placement on the node and let its VMs end; `status`: where it stands (`done` once no VM runs there); `cancel`: undrain',
    },
  ),
});

/** DeploymentDrainRequest: every field optional, so `{}` starts a drain with the defaults. */
export const DeploymentDrainRequest = Type.Object(
  {
    reason: Type.Optional(Type.String({ maxLength: 500, description: 'Why (kept in the log)' })),
  },
  { $id: 'DeploymentDrainRequest', additionalProperties: false },
);

export const WorkerRecord = Type.Object(
  {
    worker_id: Type.String(),
    state: Type.Union([Type.Literal('live'), Type.Literal('dead'), Type.Literal('left')], {
      description: '`dead`: it missed its heartbeats; `left`: it shut down cleanly',
    }),
    drained: Type.Boolean({ description: 'No new VMs are placed on it' }),
    deployment_drain: Type.Union([Type.Literal('draining'), Type.Literal('done'), Type.Literal('cancelled'), Type.Null()]),
    internal_url: Type.String(),
    capacity: Type.Object({ vcpus: Type.Integer(), memory_mb: Type.Integer(), vm_slots: Type.Integer() }),
    load: Type.Object({ running_vms: Type.Integer(), used_vcpus: Type.Integer(), used_memory_mb: Type.Integer() }),
    templates: Type.Array(Type.String()),
    version: Type.String(),
    started_at: Type.String({ format: 'date-time' }),
    heartbeat_at: Type.String({ format: 'date-time' }),
    dead_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    this_node: Type.Boolean({ description: 'The node whose admin listener answered' }),
  },
  { $id: 'WorkerRecord', title: 'WorkerRecord' },
);

export function toWorkerRecord(node: ClusterNode, selfId: string) {
  return {
    worker_id: node.id,
    state: node.state,
    drained: node.drained,
    deployment_drain: node.deploymentDrain,
    internal_url: node.internalUrl,
    capacity: { vcpus: node.capacity.vcpus, memory_mb: node.capacity.memoryMb, vm_slots: node.capacity.vmSlots },
    load: { running_vms: node.load.runningVms, used_vcpus: node.load.usedVcpus, used_memory_mb: node.load.usedMemoryMb },
    templates: node.templates,
    version: node.version,
    started_at: node.startedAt,
    heartbeat_at: node.heartbeatAt,
    dead_at: node.deadAt,
    this_node: node.id === selfId,
  };
}
