/** GET /v1/sessions/status/{session_id}: the spec's status view of a session and its VM. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SessionIdParams, toSessionStatus } from './schemas.ts';

export function registerSessionStatus(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/status/:session_id',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Session and VM status',
        description: 'No VM: vm_assigned false and the VM fields null. Killed VM: vm_alive false, vm_status "killed", expires_in_seconds 0.',
        security: BEARER_OR_API_KEY,
        params: SessionIdParams,
        response: authedResponses({ 200: Type.Ref('SessionStatus') }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toSessionStatus(await services.sandbox.sessions.status(principalOf(request), request.params.session_id)),
  );
}
