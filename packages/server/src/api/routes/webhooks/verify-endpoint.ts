/** POST /v1/webhooks/endpoints/{endpoint_id}/verify: send a signed challenge and report whether the receiver accepted it. */
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { EndpointIdParams, toVerificationRecord, WebhookVerification } from './schemas.ts';

export function registerVerifyEndpoint(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/webhooks/endpoints/:endpoint_id/verify',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Verify that the endpoint receives and accepts signed requests',
        description:
          'POSTs a signed `{"type":"webhook.verify","data":{"endpoint_id","challenge"}}` (not an event: it is not in the delivery log) and answers whether the receiver replied 2xx and whether its reply contained the challenge. On success the endpoint\'s verified_at is set.',
        security: BEARER_OR_API_KEY,
        params: EndpointIdParams,
        response: authedResponses({ 200: WebhookVerification }, { 404: 'No such endpoint among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toVerificationRecord(await services.webhooks.verify(principalOf(request).userId, request.params.endpoint_id)),
  );
}
