/** GET /v1/sessions/session/{session_id} (deprecated): current session information. */
import { principalOf } from '../../authentication.ts';
import { AnyObject, authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { fromLifecycleHooks, SessionIdParams } from './schemas.ts';

export function registerGetSession(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/session/:session_id',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Current session information',
        description:
          'Settings, metadata, the names (never the values) of its env variables, its lifecycle hooks, `auto_pause` and `on_expiry`, and its current VM.',
        deprecated: true,
        security: BEARER_OR_API_KEY,
        params: SessionIdParams,
        response: authedResponses({ 200: AnyObject }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { session, vm, alive, expiresInSeconds } = await services.sandbox.sessions.status(principalOf(request), request.params.session_id);
      return {
        session_id: session.id,
        user_id: session.userId,
        status: alive ? 'active' : 'idle',
        created_at: session.createdAt,
        last_activity_at: session.lastActivityAt,
        vm_lifetime_seconds: session.vmLifetimeSeconds,
        memory_mb: session.memoryMb,
        vcpu_count: session.vcpuCount,
        metadata: session.metadata,
        env_keys: Object.keys(session.env),
        prewarm: session.prewarm,
        lifecycle_hooks: fromLifecycleHooks(session.lifecycleHooks),
        auto_pause: session.autoPauseSeconds,
        on_expiry: session.onExpiry,
        vm_id: vm?.id ?? null,
        vm_status: vm?.status ?? null,
        vm_alive: alive,
        expires_in_seconds: expiresInSeconds,
      };
    },
  );
}
