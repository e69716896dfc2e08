/**
 * GET /v1/admin/nodes (administrators): the nodes of the deployment, their state, capacity and load, as the
 * admin listener's `GET /workers` gives them (the same record), for administrators signed in to the public API.
 */
import { Type } from 'typebox';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toWorkerRecord } from '../workers/schemas.ts';
import { adminOnly } from './require-admin.ts';

export const AdminNodeList = Type.Object({ nodes: Type.Array(Type.Ref('WorkerRecord')) }, { $id: 'AdminNodeList', title: 'AdminNodeList' });

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
    async () => ({ nodes: (await services.sandbox.nodes.list()).map((node) => toWorkerRecord(node, services.sandbox.nodes.nodeId)) }),
  );
}
