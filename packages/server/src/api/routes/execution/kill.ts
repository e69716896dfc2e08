/**
 * POST /kill: kill the VM of a session. As the spec says: 400 for a malformed session id, 404 when the
 * session does not exist or has no running VM, 403 when the session belongs to someone else.
 */
import { Type } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import { isUuid } from '../../../core/ids.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export const KillResponse = Type.Object({
  success: Type.Boolean(),
  message: Type.String({ description: 'Names the killed VM' }),
  vm_id: Type.String(),
  session_id: Type.Union([Type.String(), Type.Null()]),
});

export function registerKill(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/kill',
    {
      schema: {
        tags: ['execution'],
        summary: "Kill a session's VM",
        security: BEARER_OR_API_KEY,
        body: Type.Object({ session_id: Type.String(), api_key: Type.Optional(Type.String()) }),
        response: authedResponses(
          { 200: KillResponse },
          { 400: 'session_id is not a UUID', 403: 'The session belongs to another user', 404: 'No such session, or it has no running VM' },
        ),
      },
      ...requireAuthOrBodyKey,
    },
    async (request) => {
      const principal = principalOf(request);
      const sessionId = request.body.session_id;
      if (!isUuid(sessionId)) throw new AppError('BAD_REQUEST', `invalid session_id format: "${sessionId.slice(0, 64)}" is not a UUID`);
      const session = await services.sandbox.sessions.find(sessionId);
      if (!session) throw new AppError('NOT_FOUND', `session ${sessionId} not found`);
      if (session.userId !== principal.userId) throw new AppError('FORBIDDEN', 'you do not own this session');
      const vm = await services.sandbox.sessions.currentVm(session);
      if (!vm || (vm.status !== 'active' && vm.status !== 'starting')) throw new AppError('NOT_FOUND', `session ${sessionId} has no running VM`);
      const killed = await services.sandbox.vms.kill(principal, vm);
      return { success: true, message: `VM ${killed.id} killed`, vm_id: killed.id, session_id: session.id };
    },
  );
}
