/** DELETE /v1/vms/{vm_id}: kill one of the caller's VMs. */
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { KillResponse } from '../execution/kill.ts';
import { VmIdParams } from './get.ts';

export function registerDeleteVm(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/vms/:vm_id',
    {
      schema: {
        tags: ['vms'],
        summary: 'Kill a VM',
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        response: authedResponses({ 200: KillResponse }, { 404: 'No such running VM among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const principal = principalOf(request);
      const vm = await services.sandbox.vms.getOwned(principal, request.params.vm_id);
      const killed = await services.sandbox.vms.kill(principal, vm);
      return { success: true, message: `VM ${killed.id} killed`, vm_id: killed.id, session_id: killed.sessionId };
    },
  );
}
