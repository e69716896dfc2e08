/** GET /v1/networks/{network_id}: one of the caller's networks, with its members. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { NetworkIdParams, toNetworkRecord } from './schemas.ts';

export function registerGetNetwork(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/networks/:network_id',
    {
      schema: {
        tags: ['networks'],
        summary: 'Get a private network',
        security: BEARER_OR_API_KEY,
        params: NetworkIdParams,
        response: authedResponses({ 200: Type.Ref('NetworkRecord') }, { 404: 'No such network among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toNetworkRecord(await services.sandbox.networks.get(principalOf(request), request.params.network_id)),
  );
}
