/** GET /v1/webhooks/endpoints: the caller's endpoints (never their secrets). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toEndpointRecord } from './schemas.ts';

export function registerListEndpoints(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/webhooks/endpoints',
    {
      schema: {
        tags: ['webhooks'],
        summary: "List the caller's webhook endpoints",
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Array(Type.Ref('WebhookEndpoint')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => (await services.webhooks.list(principalOf(request).userId)).map(toEndpointRecord),
  );
}
