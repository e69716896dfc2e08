/** GET /v1/sessions/session/{session_id} (deprecated): current session information. */
import { principalOf } from '../../authentication.ts';
import { AnyObject, authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SessionIdParams } from './schemas.ts';

export function registerGetSession(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/session/:session_id',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Current session information',
        description: 'Settings, metadata, the names (never the values) of its env variables, and its current VM.',
        deprecated: true,
        security: BEARER_OR_API_KEY,
        params: SessionIdParams,
        response: authedResponses({ 200: AnyObject }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.sessions.info(principalOf(request), request.params.session_id),
  );
}
