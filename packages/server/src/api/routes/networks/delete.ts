/** DELETE /v1/networks/{network_id}: delete a network that has no members. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { NetworkIdParams } from './schemas.ts';

export function registerDeleteNetwork(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/networks/:network_id',
    {
      schema: {
        tags: ['networks'],
        summary: 'Delete a private network',
        description:
          'Deletes the network. Refused (409) while a VM that has not ended (running or paused) is on it: remove its members first (`DELETE /v1/networks/{network_id}/members/{vm_id}`). Sessions that named it stop joining it.',
        security: BEARER_OR_API_KEY,
        params: NetworkIdParams,
        response: authedResponses({ 204: Type.Null({ description: 'Deleted' }) }, { 404: 'No such network among yours', 409: 'It has members' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await services.sandbox.networks.delete(principalOf(request), request.params.network_id);
      return reply.code(204).send();
    },
  );
}
