/** Liveness and readiness probes. */
import { Type } from 'typebox';
import { sendError } from '../error-handler.ts';
import type { App, RouteContext } from '../types.ts';

export function registerHealthRoutes(app: App, { services }: RouteContext): void {
  app.get(
    '/healthz',
    { schema: { tags: ['system'], summary: 'Liveness: the process answers', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['system'],
        summary: 'Readiness: the store is reachable',
        response: { 200: Type.Object({ status: Type.Literal('ready'), store: Type.String() }) },
      },
    },
    async (request, reply) => {
      try {
        await services.database.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        return sendError(reply, 'SERVICE_UNAVAILABLE', 'the store is not reachable');
      }
      return { status: 'ready' as const, store: services.database.dialect };
    },
  );
}
