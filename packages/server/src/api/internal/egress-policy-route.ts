/**
 * POST /internal/v1/egress/vm-policy: another node received a read or a change of the egress policy of a VM
 * this node runs (its firewall rules, resolver and proxy are here). Served on the internal listener only, whose
 * hooks (signed-request.ts) admit only a request signed for this node, body included; it runs with the principal
 * that node authenticated (trusted because the whole body is signed), so ownership is checked here again.
 * `policy` null reads.
 */
import { Type } from 'typebox';
import { REMOTE_EGRESS_PATH } from '../../core/egress.ts';
import type { Services } from '../../services.ts';
import type { App } from '../types.ts';
import { SignedPrincipal } from './signed-principal.ts';

/** A policy as nodes pass it (EgressPolicy's own field names); the receiver normalizes it again. */
export const InternalEgressPolicy = Type.Object({
  allowPackageManagers: Type.Boolean(),
  allowHttp: Type.Boolean(),
  allowHttps: Type.Boolean(),
  allowedDomains: Type.Array(Type.String(), { maxItems: 1000 }),
  allowedCidrs: Type.Array(Type.String(), { maxItems: 1000 }),
  allowedPorts: Type.Array(Type.String(), { maxItems: 1000 }),
});

const Body = Type.Object({
  principal: SignedPrincipal,
  vm_id: Type.String({ minLength: 1, maxLength: 64 }),
  policy: Type.Union([InternalEgressPolicy, Type.Null()]),
});

export function registerInternalEgressRoute(app: App, services: Services): void {
  app.post(
    REMOTE_EGRESS_PATH,
    { schema: { body: Body } },
    async (request) => {
      const { principal, vm_id: vmId, policy } = request.body;
      const egress = services.sandbox.egress;
      return policy ? egress.setVmPolicy(principal, vmId, policy) : egress.getVmPolicy(principal, vmId);
    },
  );
}
