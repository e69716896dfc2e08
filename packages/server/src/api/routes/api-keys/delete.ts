/** DELETE /v1/api-keys/{item_id}: the key stops working at once, and so do the console sessions signed in with it. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { ItemIdParams } from './schemas.ts';

export function registerDeleteApiKey(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/api-keys/:item_id',
    {
      schema: {
        tags: ['api-keys'],
        summary: 'Delete one of your API keys',
        description: 'The key stops working at once, and so do the web console sessions that were signed in with it.',
        security: BEARER_OR_API_KEY,
        params: ItemIdParams,
        response: authedResponses(
          { 200: Type.Object({ id: Type.Integer(), deleted: Type.Literal(true), message: Type.String() }) },
          { 404: 'No such key among yours' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const key = await services.apiKeys.delete(principalOf(request).userId, request.params.item_id, auditActorOf(request));
      return { id: key.id, deleted: true as const, message: `API key ${key.id} (${key.keyPrefix}…) deleted` };
    },
  );
}
