/**
 * POST /internal/v1/egress/vm-policy: another node received a read or a change of the egress policy of a VM
 * this node runs (its firewall rules, resolver and proxy are here). Only a request signed with the cluster secret
 * is served; it runs with the principal that node authenticated, so ownership is checked here again. `policy`
 * null reads. Hidden from the OpenAPI document: no user calls it.
 */
import { Type } from 'typebox';
import { REMOTE_EGRESS_PATH } from '../../core/egress.ts';
import type { App, RouteContext } from '../types.ts';
import { SignedPrincipal } from './signed-principal.ts';

const Policy = Type.Object({
  allowPackageManagers: Type.Boolean(),
  allowHttp: Type.Boolean(),
  allowHttps: Type.Boolean(),
  allowedDomains: Type.Array(Type.String(), { maxItems: 1000 }),
  allowedCidrs: Type.Array(Type.String(), { maxItems: 1000 }),
});

const Body = Type.Object({
  principal: SignedPrincipal,
  vm_id: Type.String({ minLength: 1, maxLength: 64 }),
  policy: Type.Union([Policy, Type.Null()]),
});

export function registerInternalEgressRoute(app: App, { services }: RouteContext): void {
  app.post(
    REMOTE_EGRESS_PATH,
    {
      schema: { hide: true, body: Body },
      onRequest: async (request) => void services.internalAuth.verify(request.method, request.url, request.headers),
    },
    async (request) => {
      const { principal, vm_id: vmId, policy } = request.body;
      const egress = services.sandbox.egress;
      return policy ? egress.setVmPolicy(principal, vmId, policy) : egress.getVmPolicy(principal, vmId);
    },
  );
}
