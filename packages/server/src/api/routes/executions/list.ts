/** GET and HEAD /v1/executions/: the caller's execution (task) records, newest first. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, ListOffset } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toTaskRecord } from '../execution/schemas.ts';

export function registerListExecutions(app: App, { services, requireAuth }: RouteContext): void {
  app.head(
    '/v1/executions/',
    {
      config: { swagger: { exposeHeadRoute: true } },
      schema: {
        tags: ['executions'],
        summary: 'Check the executions collection',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Null({ description: 'No content' }) }),
      },
      onRequest: requireAuth,
    },
    async (_request, reply) => reply.code(200).send(),
  );
  app.get(
    '/v1/executions/',
    {
      schema: {
        tags: ['executions'],
        summary: "List the caller's execution records",
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          session_id: Type.Optional(Type.String({ maxLength: 64 })),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          offset: ListOffset,
        }),
        response: authedResponses({ 200: Type.Array(Type.Ref('TaskRecord')) }, { 404: 'session_id names no session of yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      // A filter naming someone else's session is "not found", as everywhere else, rather than an empty list.
      if (request.query.session_id) await services.sandbox.sessions.getOwned(principalOf(request), request.query.session_id);
      const rows = await services.sandbox.executions.list(principalOf(request), {
        limit: request.query.limit,
        offset: request.query.offset,
        ...(request.query.session_id ? { sessionId: request.query.session_id } : {}),
      });
      return rows.map(toTaskRecord);
    },
  );
}
