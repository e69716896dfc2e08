/**
 * GET /v1/sessions/usage/{session_id}: aggregate CPU and execution figures of a session. The published
 * InstaVM Python client (0.8.4) asks for it with no credentials at all, so unless
 * SANDBOXD_USAGE_REQUIRES_KEY is set, a request without any credential gets the figures of the session
 * it names: the session id (122 random bits) is the secret, and the answer holds nothing else (no VM id,
 * metadata or env). A request with credentials gets the owner's view, and another user's session is 404.
 */
import { Type } from 'typebox';
import { notAuthenticated } from '../../../core/authenticator.ts';
import type { SessionUsage } from '../../../core/sessions.ts';
import type { Vm } from '../../../model.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SessionIdParams } from './schemas.ts';

export function registerSessionUsage(app: App, { services, headerAuthIfPresent }: RouteContext): void {
  const keyless = !services.config.auth.usageRequiresKey;
  const liveUsage = async (vm: Vm) => {
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
  };
  app.get(
    '/v1/sessions/usage/:session_id',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Aggregate CPU usage of a session',
        description:
          "`cpu_seconds` and `execution_seconds` sum the session's executions; `vm` holds the live VM's own figures (guest CPU seconds since boot, memory) while it runs. " +
          (keyless
            ? 'Credentials are optional here, because a published client asks without any: a request with none gets these figures for the session it names (the id, 122 random bits, is the secret; nothing else about the session is answered). ' +
              "A request with credentials also gets `vm_id` and `vm_status`, and another user's session is 404. An operator who prefers to require a key sets SANDBOXD_USAGE_REQUIRES_KEY=true (then such clients get 401)."
            : 'Requires credentials (SANDBOXD_USAGE_REQUIRES_KEY is set).'),
        security: keyless ? [...BEARER_OR_API_KEY, {}] : BEARER_OR_API_KEY,
        params: SessionIdParams,
        response: authedResponses({ 200: Type.Ref('SessionUsage') }, { 404: 'No such session (among yours, when credentials are sent)' }),
      },
      onRequest: headerAuthIfPresent,
    },
    async (request) => {
      const { session_id: sessionId } = request.params;
      if (request.principal) {
        const usage = await services.sandbox.sessions.usage(request.principal, sessionId, liveUsage);
        return { ...figures(usage), vm_id: usage.vm?.id ?? null, vm_status: usage.vm?.status ?? null };
      }
      if (!keyless) throw notAuthenticated();
      return figures(await services.sandbox.sessions.usageByIdOnly(sessionId, liveUsage));
    },
  );
}

/** The figures anyone holding the session id may see: no VM id, metadata or env. */
function figures<Live>(usage: SessionUsage<Live>) {
  return {
    session_id: usage.session.id,
    executions: usage.executions,
    cpu_seconds: usage.cpuSeconds,
    execution_seconds: usage.executionSeconds,
    vcpu_count: usage.session.vcpuCount,
    memory_mb: usage.session.memoryMb,
    vm: usage.live,
  };
}
