/** POST /execute_async and /v1/execute_async: start a run and answer its task id at once. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { EXECUTION_STATUSES } from '../../../model.ts';
import { authedResponses, BEARER_OR_API_KEY, StringEnum } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toExecuteRequest, type ExecuteCommandRequest } from './schemas.ts';

const AsyncResponse = Type.Object({
  task_id: Type.Integer({ description: 'Poll GET /v1/executions/{task_id} until is_complete' }),
  execution_id: Type.Integer(),
  session_id: Type.String(),
  status: StringEnum(EXECUTION_STATUSES),
  queue_position: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'When the run waits for a new VM while the host restores others: VM starts ahead of it; null when its VM is ready (or came from the warm pool)',
  }),
  estimated_start_seconds: Type.Union([Type.Integer(), Type.Null()], { description: 'Expected wait for that VM, seconds; null with queue_position' }),
});

export function registerExecuteAsync(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  for (const url of ['/execute_async', '/v1/execute_async']) {
    app.post(
      url,
      {
        schema: {
          tags: ['execution'],
          summary: 'Start code or a command; returns a task id',
          security: BEARER_OR_API_KEY,
          body: Type.Ref('ExecuteCommandRequest') as unknown as typeof ExecuteCommandRequest,
          response: authedResponses({ 200: AsyncResponse }, { 404: 'No such session among yours', 429: 'Rate limit' }),
        },
        ...requireAuthOrBodyKey,
      },
      async (request) => {
        const { record, done, queue } = await services.sandbox.executions.start(principalOf(request), toExecuteRequest(request.body), 'async');
        done.catch((error: unknown) => request.log.error({ err: error, 'execution.id': record.id }, 'async execution failed to record'));
        return {
          task_id: record.id,
          execution_id: record.id,
          session_id: record.sessionId,
          status: record.status,
          queue_position: queue?.position ?? null,
          estimated_start_seconds: queue?.estimatedWaitSeconds ?? null,
        };
      },
    );
  }
}
