/** Liveness and readiness probes. */
import { Type } from 'typebox';
import { checkReadiness } from '../../core/readiness.ts';
import { StringEnum } from '../schemas/common.ts';
import { sendError } from '../error-handler.ts';
import type { App, RouteContext } from '../types.ts';

const ReadinessChecks = Type.Object(
  {
    store: StringEnum(['ok', 'unreachable'], { description: 'The store answered a trivial query' }),
    default_template: StringEnum(['idle', 'building', 'ready', 'failed'], {
      description:
        "The built-in template on this node: `ready` once the snapshots a first VM restores from are made; `idle` before the engine was started (it starts on the first VM when the server was not told to warm up), `building` while it prepares, `failed` when that failed (see the log). The warm pool's fill is not checked",
    }),
  },
  { description: 'Each check of readiness and its result' },
);

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
        summary: 'Readiness: the store answers and the default template is warm on this node',
        description:
          'Ready (200) when the store answers a trivial query and the built-in template is warm here (its snapshots made: a new VM is one restore away). ' +
          'Otherwise 503 with what is not ready: `status` is `starting` while the template is prepared (a fresh node builds it once, minutes under TCG), ' +
          '`unavailable` when the store does not answer or the template failed. The warm pool is not checked (load drains it). `GET /healthz` is liveness.',
        response: {
          200: Type.Object({
            status: Type.Literal('ready'),
            store: Type.String({ description: 'The store: sqlite or postgres' }),
            checks: ReadinessChecks,
          }),
          503: Type.Object(
            {
              detail: Type.String({ description: 'What is not ready' }),
              code: Type.Literal('SERVICE_UNAVAILABLE'),
              status: StringEnum(['starting', 'unavailable']),
              store: Type.String({ description: 'The store: sqlite or postgres' }),
              checks: ReadinessChecks,
            },
            { description: 'Not ready: each check says why' },
          ),
        },
      },
    },
    async (request, reply) => {
      const readiness = await checkReadiness(services.database, services.sandbox.engine);
      const store = services.database.dialect;
      if (readiness.ready) return { status: 'ready' as const, store, checks: readiness.checks };
      if (readiness.storeError) request.log.warn({ err: readiness.storeError }, 'readiness check: the store did not answer');
      const waiting = [
        ...(readiness.checks.store === 'ok' ? [] : ['the store is not reachable']),
        ...(readiness.checks.default_template === 'ready' ? [] : [`the default template is ${readiness.checks.default_template}`]),
      ];
      return sendError(reply, 'SERVICE_UNAVAILABLE', `not ready: ${waiting.join('; ')}`, {}, { status: readiness.status, store, checks: readiness.checks });
    },
  );
}
