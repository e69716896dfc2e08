/** GET /v1/vms: the caller's VMs, newest first. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { VM_STATUSES } from '../../../model.ts';
import { authedResponses, BEARER_OR_API_KEY, StringEnum } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVmRecord } from '../sessions/schemas.ts';

export function registerListVms(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/vms',
    {
      schema: {
        tags: ['vms'],
        summary: "List the caller's VMs",
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          status: Type.Optional(StringEnum(VM_STATUSES)),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
        }),
        response: authedResponses({ 200: Type.Array(Type.Ref('VmRecord')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const vms = await services.sandbox.vms.list(principalOf(request), request.query.limit, request.query.status);
      const now = services.clock.now();
      return vms.map((vm) => toVmRecord(vm, now));
    },
  );
}
