/** POST /v1/networks/{network_id}/members and DELETE /v1/networks/{network_id}/members/{vm_id}: a VM joins or leaves. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { NetworkIdParams, toNetworkMemberRecord } from './schemas.ts';

export function registerNetworkMembers(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/networks/:network_id/members',
    {
      schema: {
        tags: ['networks'],
        summary: 'Add a VM to a private network',
        description:
          "Adds a running or paused VM of yours to the network: it gets the next free address, the members' /etc/hosts name it, and it reaches them (and they it) from now on. " +
          "Its session's next VMs join the network too. Adding a member again answers its record as it is.",
        security: BEARER_OR_API_KEY,
        params: NetworkIdParams,
        body: Type.Object({ vm_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: authedResponses(
          { 200: Type.Ref('NetworkMemberRecord') },
          {
            404: 'No such network or VM among yours',
            409: 'The network is full',
            410: 'The VM has ended (VM_GONE)',
            503: 'This server cannot relay private networks',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { networks } = services.sandbox;
      const principal = principalOf(request);
      const member = await networks.join(principal, request.params.network_id, request.body.vm_id);
      const network = await networks.getOwned(principal, request.params.network_id);
      return toNetworkMemberRecord(member, network);
    },
  );

  app.delete(
    '/v1/networks/:network_id/members/:vm_id',
    {
      schema: {
        tags: ['networks'],
        summary: 'Remove a VM from a private network',
        description:
          "The VM leaves the network: new connections between it and the members are refused from now on (open ones run on until they close), its address is freed, the members' /etc/hosts lose it, and its session's next VMs do not join the network.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ ...NetworkIdParams.properties, vm_id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: authedResponses({ 204: Type.Null({ description: 'Removed' }) }, { 404: 'No such network or VM among yours, or the VM is not on it' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await services.sandbox.networks.leave(principalOf(request), request.params.network_id, request.params.vm_id);
      return reply.code(204).send();
    },
  );
}
