/** DELETE /v1/webhooks/endpoints/{endpoint_id}: nothing more is sent to it; its delivery log stays. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { EndpointIdParams } from './schemas.ts';

export function registerDeleteEndpoint(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/webhooks/endpoints/:endpoint_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete one of your webhook endpoints',
        description: 'Its pending deliveries end as failed; its deliveries stay in the log.',
        security: BEARER_OR_API_KEY,
        params: EndpointIdParams,
        response: authedResponses(
          { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true), message: Type.String() }) },
          { 404: 'No such endpoint among yours' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const endpoint = await services.webhooks.delete(principalOf(request).userId, request.params.endpoint_id, auditActorOf(request));
      return { id: endpoint.id, deleted: true as const, message: `webhook endpoint ${endpoint.id} (${endpoint.url}) deleted` };
    },
  );
}
