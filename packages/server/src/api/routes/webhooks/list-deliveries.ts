/** GET /v1/webhooks/deliveries: the caller's delivery log, newest first, filtered and paged by an opaque cursor. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toDeliveryRecord } from './schemas.ts';

const OptionalText = Type.Optional(Type.Union([Type.String(), Type.Null()]));

export function registerListDeliveries(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/webhooks/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'The webhook delivery log',
        description:
          'Newest first. Pass next_cursor as cursor for the next page; next_cursor is null on the last page. status is one of pending, delivering, succeeded, failed.',
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          endpoint_id: OptionalText,
          status: OptionalText,
          event_type: OptionalText,
          cursor: OptionalText,
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
        }),
        response: authedResponses(
          { 200: Type.Ref('WebhookDeliveryList') },
          { 400: 'Unknown status or a cursor this server did not return', 404: 'endpoint_id names no endpoint of yours' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const query = request.query;
      // A filter naming someone else's endpoint is "not found", as everywhere else, rather than an empty list.
      if (query.endpoint_id) await services.webhooks.get(principalOf(request).userId, query.endpoint_id);
      const page = await services.webhooks.listDeliveries(principalOf(request).userId, {
        endpointId: query.endpoint_id,
        status: query.status,
        eventType: query.event_type,
        cursor: query.cursor,
        limit: query.limit ?? 50,
      });
      return { items: page.items.map(toDeliveryRecord), next_cursor: page.nextCursor };
    },
  );
}
