/** GET /v1/executions/{item_id}: one of the caller's execution records (poll it for async runs). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, RecordId } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toTaskRecord } from '../execution/schemas.ts';

export function registerGetExecution(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/executions/:item_id',
    {
      schema: {
        tags: ['executions'],
        summary: 'Get an execution record',
        security: BEARER_OR_API_KEY,
        params: Type.Object({ item_id: RecordId() }),
        response: authedResponses({ 200: Type.Ref('TaskRecord') }, { 404: 'No such execution among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toTaskRecord(await services.sandbox.executions.get(principalOf(request), request.params.item_id)),
  );
}
