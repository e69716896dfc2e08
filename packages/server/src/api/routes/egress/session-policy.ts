/** GET and PUT /v1/sessions/{session_id}/egress: the egress policy a session's VMs start with, and follow. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SessionIdParams } from '../sessions/schemas.ts';
import { EgressPolicyRef, toEgressPolicy, toEgressPolicyRecord } from './schemas.ts';

export function registerSessionEgressPolicy(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/:session_id/egress',
    {
      schema: {
        tags: ['egress'],
        summary: "A session's egress policy",
        description: "The policy the session's new VMs start with: its own (`source: session`) or the deployment's default.",
        security: BEARER_OR_API_KEY,
        params: SessionIdParams,
        response: authedResponses({ 200: Type.Ref('EgressPolicy') }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toEgressPolicyRecord(await services.sandbox.egress.getSessionPolicy(principalOf(request), request.params.session_id)),
  );

  app.put(
    '/v1/sessions/:session_id/egress',
    {
      schema: {
        tags: ['egress'],
        summary: "Replace a session's egress policy",
        description:
          "Replaces the policy of the session's future VMs, and of its running VM now (`updated_vm_ids`), which follows it from its next connection.",
        security: BEARER_OR_API_KEY,
        params: SessionIdParams,
        body: EgressPolicyRef,
        response: authedResponses(
          { 200: Type.Ref('EgressPolicy') },
          {
            400: 'A domain, CIDR or port entry that is not one (or a port the proxy or the resolver always takes: 80/tcp, 443/tcp, 53)',
            404: 'No such session among yours',
            503: 'This server cannot enforce egress policies (not root, no nftables or cgroup v2)',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { body } = request;
      const result = await services.sandbox.egress.setSessionPolicy(principalOf(request), request.params.session_id, toEgressPolicy(body));
      return toEgressPolicyRecord({ ...result, enforced: result.updatedVmIds.length > 0 });
    },
  );
}
