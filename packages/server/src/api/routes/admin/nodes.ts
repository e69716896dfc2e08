/** GET /v1/admin/nodes (administrators): the nodes of the deployment, their state, capacity and load. */
import { Type } from 'typebox';
import { authedResponses, BEARER_OR_API_KEY, StringEnum } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { adminOnly } from './require-admin.ts';

export const AdminNodeList = Type.Object(
  {
    nodes: Type.Array(
      Type.Object({
        id: Type.String(),
        state: StringEnum(['live', 'dead', 'left']),
        drained: Type.Boolean(),
        deployment_drain: Type.Union([Type.String(), Type.Null()]),
        vcpus: Type.Integer(),
        memory_mb: Type.Integer(),
        vm_slots: Type.Integer(),
        running_vms: Type.Integer(),
        used_vcpus: Type.Integer(),
        used_memory_mb: Type.Integer(),
        version: Type.String(),
        started_at: Type.String({ format: 'date-time' }),
        heartbeat_at: Type.String({ format: 'date-time' }),
        dead_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      }),
    ),
  },
  { $id: 'AdminNodeList', title: 'AdminNodeList' },
);

export function registerAdminNodes(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/admin/nodes',
    {
      schema: {
        tags: ['admin'],
        summary: 'List the nodes of the deployment (administrators)',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('AdminNodeList') }, { 403: 'Not an administrator' }),
      },
      onRequest: adminOnly(requireAuth),
    },
    async () => {
      const nodes = await services.sandbox.nodes.list();
      return {
        nodes: nodes.map((node) => ({
          id: node.id,
          state: node.state,
          drained: node.drained,
          deployment_drain: node.deploymentDrain,
          vcpus: node.capacity.vcpus,
          memory_mb: node.capacity.memoryMb,
          vm_slots: node.capacity.vmSlots,
          running_vms: node.load.runningVms,
          used_vcpus: node.load.usedVcpus,
          used_memory_mb: node.load.usedMemoryMb,
          version: node.version,
          started_at: node.startedAt,
          heartbeat_at: node.heartbeatAt,
          dead_at: node.deadAt,
        })),
      };
    },
  );
}
