/** PATCH /v1/api-keys/{item_id}: change a key's description or expiry (a past expiry disables it at once). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import type { ApiKeyBody } from './schemas.ts';
import { ItemIdParams, toApiKeyRecord } from './schemas.ts';

export function registerUpdateApiKey(app: App, { services, requireAuth }: RouteContext): void {
  app.patch(
    '/v1/api-keys/:item_id',
    {
      schema: {
        tags: ['api-keys'],
        summary: 'Update one of your API keys',
        description: 'Fields that are present are changed (null clears them); absent fields are kept.',
        security: BEARER_OR_API_KEY,
        params: ItemIdParams,
        body: Type.Ref('ApiKeyBody') as unknown as typeof ApiKeyBody,
        response: authedResponses({ 200: Type.Ref('ApiKeyRecord') }, { 404: 'No such key among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const key = await services.apiKeys.update(principalOf(request).userId, request.params.item_id, {
        expiresAt: request.body.expires_at,
        description: request.body.description,
      });
      return toApiKeyRecord(key);
    },
  );
}
