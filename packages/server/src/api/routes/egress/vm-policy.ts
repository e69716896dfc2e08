/** GET and PUT /v1/vms/{vm_id}/egress: a VM's egress policy, read and replaced while it runs. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { VmIdParams } from '../vms/params.ts';
import { EgressPolicyRef, toEgressPolicy, toEgressPolicyRecord } from './schemas.ts';

export function registerVmEgressPolicy(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/vms/:vm_id/egress',
    {
      schema: {
        tags: ['egress'],
        summary: "A VM's egress policy",
        description:
          "The policy the VM runs under: its own, else its session's when it started, else the deployment's default (`source`). `enforced` says whether the host enforces it on the running VM now.",
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        response: authedResponses({ 200: Type.Ref('EgressPolicy') }, { 404: 'No such VM among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toEgressPolicyRecord(await services.sandbox.egress.getVmPolicy(principalOf(request), request.params.vm_id)),
  );

  app.put(
    '/v1/vms/:vm_id/egress',
    {
      schema: {
        tags: ['egress'],
        summary: "Replace a VM's egress policy",
        description:
          'Replaces the policy; a running VM follows it from its next connection and DNS lookup (within a second), and a VM that is still starting starts with it. Enforced on the host, where a root user in the guest cannot change it. An allowed name gives HTTP and HTTPS through the proxy (every HTTP request\'s Host and every TLS SNI checked; a ClientHello with Encrypted Client Hello refused), and other ports of its addresses only as `allowed_ports` names them; `allowed_cidrs` are open on every port. Omitted fields: `allow_http` and `allow_https` true, the rest empty or false. A policy of `allowed_domains: ["*"]` and `allowed_cidrs: ["0.0.0.0/0"]` is open (no enforcement).',
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        body: EgressPolicyRef,
        response: authedResponses(
          { 200: Type.Ref('EgressPolicy') },
          {
            400: 'A domain, CIDR or port entry that is not one (or a port the proxy or the resolver always takes: 80/tcp, 443/tcp, 53)',
            404: 'No such VM among yours',
            409: 'The VM has ended',
            503: 'This server cannot enforce egress policies (not root, no nftables or cgroup v2), or the node that runs the VM cannot be reached',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { body } = request;
      return toEgressPolicyRecord(await services.sandbox.egress.setVmPolicy(principalOf(request), request.params.vm_id, toEgressPolicy(body)));
    },
  );
}
