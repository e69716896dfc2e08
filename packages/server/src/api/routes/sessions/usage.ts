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
      preValidation: requireAuth,
    },
    async (request) => {
      const usage = await services.sandbox.sessions.usage(principalOf(request), request.params.session_id, async (vm) => {
        const agent = services.sandbox.vms.agentOf(vm);
        return agent ? agent.usage() : null;
      });
      return {
        session_id: usage.session.id,
        executions: usage.executions,
        cpu_seconds: usage.cpuSeconds,
        execution_seconds: usage.executionSeconds,
        vcpu_count: usage.session.vcpuCount,
        memory_mb: usage.session.memoryMb,
        vm_id: usage.vm?.id ?? null,
        vm_status: usage.vm?.status ?? null,
        vm: usage.live && {
          cpu_seconds: usage.live.cpu.busySeconds,
          memory_total_mb: Math.round(usage.live.memory.totalBytes / 1048576),
          memory_used_mb: Math.round(usage.live.memory.usedBytes / 1048576),
          uptime_seconds: usage.live.uptimeSeconds,
          load_average: usage.live.loadAverage,
        },
      };
    },
  );
}
