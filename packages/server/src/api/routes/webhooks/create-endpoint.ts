/** POST /v1/webhooks/endpoints: register a receiver; the response is the only place (besides rotate-secret) the signing secret appears. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { EndpointCreateBody, toEndpointRecord } from './schemas.ts';

export function registerCreateEndpoint(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/webhooks/endpoints',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Create a webhook endpoint',
        description:
          'Events whose type matches one of `event_patterns` are POSTed to `url`, signed the Standard Webhooks way. The response carries `secret` (whsec_…): keep it to verify signatures; it is not shown again. URLs that point at loopback, private, link-local or metadata addresses are refused unless the server allows private targets.',
        security: BEARER_OR_API_KEY,
        body: EndpointCreateBody,
        response: authedResponses(
          { 200: Type.Ref('WebhookEndpoint') },
          { 400: 'URL not allowed (WEBHOOK_URL_NOT_ALLOWED), bad pattern, or too many endpoints' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const body = request.body;
      const endpoint = await services.webhooks.create(
        principalOf(request).userId,
        { url: body.url, eventPatterns: body.event_patterns, description: body.description, enabled: body.enabled },
        auditActorOf(request),
      );
      return toEndpointRecord(endpoint);
    },
  );
}
