/** GET and HEAD /v1/api-keys/: the caller's keys (never another user's, never a full key). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toApiKeyRecord } from './schemas.ts';

export function registerListApiKeys(app: App, { services, requireAuth }: RouteContext): void {
  // HEAD is declared before GET so Fastify does not generate its own.
  app.head(
    '/v1/api-keys/',
    {
      config: { swagger: { exposeHeadRoute: true } },
      schema: {
        tags: ['api-keys'],
        summary: 'Check that the API keys collection is reachable with these credentials',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Null({ description: 'No content' }) }),
      },
      onRequest: requireAuth,
    },
    async (_request, reply) => reply.code(200).send(),
  );

  app.get(
    '/v1/api-keys/',
    {
      schema: {
        tags: ['api-keys'],
        summary: "List the caller's API keys",
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Array(Type.Ref('ApiKeyRecord')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => (await services.apiKeys.list(principalOf(request).userId)).map(toApiKeyRecord),
  );
}
