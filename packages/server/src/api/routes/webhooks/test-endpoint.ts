/** POST /v1/webhooks/endpoints/{endpoint_id}/test: send a webhook.test event to this endpoint and answer with its delivery. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { EndpointIdParams, toDeliveryRecord } from './schemas.ts';

export function registerTestEndpoint(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/webhooks/endpoints/:endpoint_id/test',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a test event',
        description:
          'Records a webhook.test event for this endpoint only, sends it at once and answers with the delivery after that first attempt (status succeeded, or pending with next_retry_at when the receiver failed; retries follow the schedule).',
        security: BEARER_OR_API_KEY,
        params: EndpointIdParams,
        response: authedResponses({ 200: Type.Ref('WebhookDelivery') }, { 404: 'No such endpoint among yours', 409: 'The endpoint is disabled' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toDeliveryRecord(await services.webhooks.sendTest(principalOf(request).userId, request.params.endpoint_id)),
  );
}
