/** GET /v1/sessions/app-url/{session_id}?port=: where a port of the session's VM is served. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { AppError } from '../../../core/errors.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { PortNumber } from './schemas.ts';

export function registerAppUrl(app: App, { services, requireAuth }: RouteContext): void {
  const { sessions, appUrls } = services.sandbox;
  app.get(
    '/v1/sessions/app-url/:session_id',
    {
      schema: {
        tags: ['apps'],
        summary: 'Public URL of a port inside the VM',
        description:
          "The addresses of a port of the session's VM through the preview proxy. Only the owner may open them (API key or bearer token) until a share (POST /v1/shares) opens the port to others. Nothing needs to listen on the port yet; a request to it answers 502 until something does.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String() }),
        querystring: Type.Object({ port: Type.Optional({ ...PortNumber, default: 80 }) }),
        response: authedResponses({ 200: Type.Ref('AppUrlResponse') }, { 404: 'No such session among yours, or it has no VM yet' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const session = await sessions.getOwned(principalOf(request), request.params.session_id);
      const vm = await sessions.currentVm(session);
      if (!vm) throw new AppError('NOT_FOUND', `session ${session.id} has no VM yet: run code or POST /v1/vms first`);
      const port = request.query.port ?? 80;
      const status = sessions.statusOf(session, vm);
      return {
        url: appUrls.pathUrl(session.id, port),
        direct_url: appUrls.directUrl(vm.id, port),
        vm_ip: vm.ip ?? '',
        port,
        vm_id: vm.id,
        session_id: session.id,
        status: vm.status === 'active' ? 'active' : 'killed',
        expires_in_seconds: status.expiresInSeconds ?? 0,
      };
    },
  );
}
