/** GET /v1/sessions/usage/{session_id}: aggregate CPU and execution figures of a session. */
import { principalOf } from '../../authentication.ts';
import { AnyObject, authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SessionIdParams } from './schemas.ts';

export function registerSessionUsage(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/usage/:session_id',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Aggregate CPU usage of a session',
        description:
          '`cpu_seconds` and `execution_seconds` sum the session\'s executions; `vm` holds the live VM\'s own figures (guest CPU seconds since boot, memory) while it runs.',
        security: BEARER_OR_API_KEY,
        params: SessionIdParams,
        response: authedResponses({ 200: AnyObject }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) =>
      services.sandbox.sessions.usage(principalOf(request), request.params.session_id, async (vm) => {
        const agent = services.sandbox.vms.agentOf(vm);
        if (!agent) return null;
        const usage = await agent.usage();
        return {
          cpu_seconds: usage.cpu.busySeconds,
          memory_total_mb: Math.round(usage.memory.totalBytes / 1048576),
          memory_used_mb: Math.round(usage.memory.usedBytes / 1048576),
          uptime_seconds: usage.uptimeSeconds,
          load_average: usage.loadAverage,
        };
      }),
  );
}
