/** PATCH /v1/webhooks/endpoints/{endpoint_id}: change url, patterns, description or enabled; absent fields are kept. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { EndpointIdParams, EndpointUpdateBody, toEndpointRecord } from './schemas.ts';

export function registerUpdateEndpoint(app: App, { services, requireAuth }: RouteContext): void {
  app.patch(
    '/v1/webhooks/endpoints/:endpoint_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Update one of your webhook endpoints',
        description: 'A disabled endpoint gets nothing: deliveries that fall due while it is disabled end as failed (replay them after enabling it).',
        security: BEARER_OR_API_KEY,
        params: EndpointIdParams,
        body: EndpointUpdateBody,
        response: authedResponses({ 200: Type.Ref('WebhookEndpoint') }, { 400: 'URL not allowed or bad pattern', 404: 'No such endpoint among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const body = request.body;
      const endpoint = await services.webhooks.update(
        principalOf(request).userId,
        request.params.endpoint_id,
        { url: body.url, eventPatterns: body.event_patterns, description: body.description, enabled: body.enabled },
        auditActorOf(request),
      );
      return toEndpointRecord(endpoint);
    },
  );
}
