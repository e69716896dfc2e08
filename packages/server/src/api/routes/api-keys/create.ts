/** POST /v1/api-keys/: create a key; the response is the only place the full key ever appears. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import type { ApiKeyCreateBody } from './schemas.ts';
import { toApiKeyRecord } from './schemas.ts';

export function registerCreateApiKey(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/api-keys/',
    {
      schema: {
        tags: ['api-keys'],
        summary: 'Create an API key',
        description:
          'Returns the key record with `full_key`. Store it: it is kept only as a hash and cannot be shown again. The body is optional. `format: "e2b"` makes a key shaped like E2B\'s (`e2b_` + 40 hex digits) for tools that check it; it works on both APIs like any key.',
        security: BEARER_OR_API_KEY,
        body: Type.Union([Type.Ref('ApiKeyCreateBody'), Type.Null()]) as unknown as typeof ApiKeyCreateBody,
        response: authedResponses({ 200: Type.Ref('ApiKeyRecord') }, { 400: 'expires_at in the past' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const body = request.body ?? {};
      const key = await services.apiKeys.create(
        principalOf(request).userId,
        { expiresAt: body.expires_at, description: body.description, ...(body.format ? { format: body.format } : {}) },
        auditActorOf(request),
      );
      return toApiKeyRecord(key);
    },
  );
}
