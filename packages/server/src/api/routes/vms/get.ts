/** GET /v1/vms/{vm_id}: one of the caller's VMs. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVmRecord } from '../sessions/schemas.ts';

export const VmIdParams = Type.Object({ vm_id: Type.String({ minLength: 1, maxLength: 64 }) });

export function registerGetVm(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/vms/:vm_id',
    {
      schema: {
        tags: ['vms'],
        summary: 'Get a VM',
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        response: authedResponses({ 200: Type.Ref('VmRecord') }, { 404: 'No such VM among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toVmRecord(await services.sandbox.vms.getOwned(principalOf(request), request.params.vm_id), services.clock.now()),
  );
}
