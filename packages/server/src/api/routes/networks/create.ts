/** POST /v1/networks: make a private network for your VMs. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { NetworkName, toNetworkRecord } from './schemas.ts';

export function registerCreateNetwork(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/networks',
    {
      schema: {
        tags: ['networks'],
        summary: 'Create a private network',
        description:
          'Makes a private network: a /24 of virtual addresses (`10.250.<n>.0/24`) your VMs join (`networks` of `POST /v1/vms` or `POST /v1/sessions`, or `POST /v1/networks/{network_id}/members`). ' +
          "Members reach each other over TCP only (no UDP, no ping) at their addresses and at `<vm name>.<network>.internal` / `<vm id>.<network>.internal` (written into each member's /etc/hosts), on any port, without sharing it publicly. " +
          "No other VM reaches them this way, yours or another user's; egress policies still apply to traffic leaving the host.",
        security: BEARER_OR_API_KEY,
        body: Type.Object({ name: NetworkName }),
        response: authedResponses(
          { 201: Type.Ref('NetworkRecord') },
          {
            409: 'You have a network of this name, or 256 networks already',
            503: 'This server cannot relay private networks (needs root, nftables and cgroup v2)',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const created = await services.sandbox.networks.create(principalOf(request), request.body.name);
      reply.code(201);
      return toNetworkRecord(created);
    },
  );
}
