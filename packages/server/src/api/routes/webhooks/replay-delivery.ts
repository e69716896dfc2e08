/** POST /v1/webhooks/deliveries/{delivery_id}/replay: send the same event again as a new delivery. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { DeliveryIdParams, toDeliveryRecord } from './schemas.ts';

export function registerReplayDelivery(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/webhooks/deliveries/:delivery_id/replay',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Replay a delivery',
        description:
          'Creates a new delivery of the same event to the same endpoint, with replay_of_delivery_id set, sends it at once and answers with it after that first attempt. The webhook-id header is the event id, as in the original: receivers that already processed it can recognise it.',
        security: BEARER_OR_API_KEY,
        params: DeliveryIdParams,
        response: authedResponses(
          { 200: Type.Ref('WebhookDelivery') },
          { 404: 'No such delivery among yours, or its endpoint was deleted', 409: 'The endpoint is disabled' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => toDeliveryRecord(await services.webhooks.replay(principalOf(request).userId, request.params.delivery_id)),
  );
}
