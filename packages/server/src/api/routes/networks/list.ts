/** GET /v1/networks: the caller's networks, oldest first, with their members. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toNetworkRecord } from './schemas.ts';

export function registerListNetworks(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/networks',
    {
      schema: {
        tags: ['networks'],
        summary: "List the caller's private networks",
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Array(Type.Ref('NetworkRecord')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => (await services.sandbox.networks.list(principalOf(request))).map(toNetworkRecord),
  );
}
