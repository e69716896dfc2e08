/** GET /v1/webhooks/deliveries/{delivery_id}: one delivery with every attempt (status, error, duration, time). */
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { DeliveryIdParams, toAttemptRecord, toDeliveryRecord, WebhookDeliveryDetail } from './schemas.ts';

export function registerGetDelivery(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/webhooks/deliveries/:delivery_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Get one of your deliveries with its attempts',
        security: BEARER_OR_API_KEY,
        params: DeliveryIdParams,
        response: authedResponses({ 200: WebhookDeliveryDetail }, { 404: 'No such delivery among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const delivery = await services.webhooks.getDelivery(principalOf(request).userId, request.params.delivery_id);
      return { ...toDeliveryRecord(delivery), attempts: delivery.attempts.map(toAttemptRecord) };
    },
  );
}
