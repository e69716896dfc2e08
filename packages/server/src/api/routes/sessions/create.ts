/** POST /v1/sessions/session (deprecated but fully working): create a session; with prewarm, start its VM now. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toSessionCreateResponse, type SessionCreateBody, type SessionCreateRequest } from './schemas.ts';

export function registerCreateSession(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/v1/sessions/session',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Create a session',
        deprecated: true,
        description:
          'Creates a session; its VM is acquired on the first execute or `POST /v1/vms`, or at once in the background with `prewarm: true`. ' +
          '`env` applies to every execution of the session. The body is optional: every field has a default.',
        security: BEARER_OR_API_KEY,
        body: Type.Union([Type.Ref('SessionCreateRequest'), Type.Null()]) as unknown as typeof SessionCreateRequest,
        response: authedResponses({ 200: Type.Ref('SessionCreateResponse') }),
      },
      ...requireAuthOrBodyKey,
    },
    async (request) => {
      const principal = principalOf(request);
      const body: SessionCreateBody = request.body ?? {};
      const session = await services.sandbox.sessions.create(principal, {
        vmLifetimeSeconds: body.vm_lifetime_seconds,
        memoryMb: body.memory_mb,
        vcpuCount: body.vcpu_count,
        metadata: body.metadata,
        env: body.env,
        prewarm: body.prewarm,
      });
      if (session.prewarm) {
        services.sandbox.vms.ensureVm(principal, session).catch((error: unknown) => {
          request.log.warn({ err: error, 'session.id': session.id }, 'prewarm failed; the first execute will try again');
        });
      }
      return toSessionCreateResponse(session, session.prewarm);
    },
  );
}
