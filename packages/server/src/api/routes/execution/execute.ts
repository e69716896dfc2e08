/**
 * POST /execute: run code or a command in the session's VM and wait. The first call of a session starts
 * its VM; later calls reuse it until it expires; the next call after that starts a new one.
 */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toExecuteRequest, toExecuteResponse, type ExecuteCommandRequest } from './schemas.ts';

export function registerExecute(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/execute',
    {
      schema: {
        tags: ['execution'],
        summary: 'Run code or a command and wait for the result',
        description:
          'Waits up to `timeout` seconds. If the command is still running then, answers 408 with `execution_id`: the command goes on and ' +
          '`GET /v1/executions/{execution_id}` shows its record complete later.',
        security: BEARER_OR_API_KEY,
        body: Type.Ref('ExecuteCommandRequest') as unknown as typeof ExecuteCommandRequest,
        response: authedResponses(
          { 200: Type.Ref('ExecuteResponse') },
          {
            404: 'No such session among yours',
            408: 'Still running after timeout (body has execution_id)',
            429: 'Rate limit, quota, or no VM could be ready within the timeout (CAPACITY_BUSY, with Retry-After)',
            503: 'No VM could be started',
            507: 'The server is low on disk space (HOST_STORAGE_LOW); no VM was started',
          },
        ),
      },
      ...requireAuthOrBodyKey,
    },
    async (request) => {
      const row = await services.sandbox.executions.execute(principalOf(request), toExecuteRequest(request.body));
      return toExecuteResponse(row);
    },
  );
}
