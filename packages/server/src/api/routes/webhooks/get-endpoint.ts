/** GET /v1/webhooks/endpoints/{endpoint_id}: one of the caller's endpoints; another user's id answers 404. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { EndpointIdParams, toEndpointRecord } from './schemas.ts';

export function registerGetEndpoint(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/webhooks/endpoints/:endpoint_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Get one of your webhook endpoints',
        security: BEARER_OR_API_KEY,
        params: EndpointIdParams,
        response: authedResponses({ 200: Type.Ref('WebhookEndpoint') }, { 404: 'No such endpoint among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toEndpointRecord(await services.webhooks.get(principalOf(request).userId, request.params.endpoint_id)),
  );
}
