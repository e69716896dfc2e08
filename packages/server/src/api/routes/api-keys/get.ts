/** GET /v1/api-keys/{item_id}: one of the caller's keys; another user's key id answers 404. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { ItemIdParams, toApiKeyRecord } from './schemas.ts';

export function registerGetApiKey(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/api-keys/:item_id',
    {
      schema: {
        tags: ['api-keys'],
        summary: 'Get one of your API keys',
        security: BEARER_OR_API_KEY,
        params: ItemIdParams,
        response: authedResponses({ 200: Type.Ref('ApiKeyRecord') }, { 404: 'No such key among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toApiKeyRecord(await services.apiKeys.get(principalOf(request).userId, request.params.item_id)),
  );
}
