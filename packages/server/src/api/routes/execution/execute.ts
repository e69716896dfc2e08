/**
 * POST /execute: run code or a command in the session's VM and wait. The first call of a session starts
 * its VM; later calls reuse it until it expires; the next call after that starts a new one.
 */
import { Type } from 'typebox';
import { resumedMs } from '../../../core/vms/index.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, byMediaType } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { streamFormatOf } from '../processes/output-stream.ts';
import { streamExecution } from './execute-stream.ts';
import { toExecuteRequest, toExecuteResponse, type ExecuteCommandRequest } from './schemas.ts';

const STREAMED_RUN =
  '`start` (execution_id, session_id), then `stdout`/`stderr` (`data`) as the code writes (Python too), then one of `end` ' +
  "(`execution`: the ExecuteResponse; `error`: why it did not complete, as the execution's record says, or null), " +
  '`timeout` (the wait ran out; the run goes on) or `error` (`code`, `detail`); ' +
  '`dropped` (`characters`) when a slow reader missed output (the record keeps it)';

export function registerExecute(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  const streams = new Set<AbortController>();
  // Before the server waits for open connections to finish: a stream's run may outlast the shutdown's patience.
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.abort();
  });
  app.post(
    '/execute',
    {
      schema: {
        tags: ['execution'],
        summary: 'Run code or a command and wait for the result',
        description:
          'Waits up to `timeout` seconds. If the command is still running then, answers 408 with `execution_id`: the command goes on and ' +
          '`GET /v1/executions/{execution_id}` shows its record complete later. With `Accept: application/x-ndjson` (or ' +
          '`text/event-stream`) the answer is the run as it happens instead: ' +
          STREAMED_RUN +
          '. Refusals (404, 422, 429, 503) are answered before the stream starts; closing the stream leaves the run going.',
        security: BEARER_OR_API_KEY,
        body: Type.Ref('ExecuteCommandRequest') as unknown as typeof ExecuteCommandRequest,
        response: authedResponses(
          {
            200: byMediaType('The result; or, asked for by Accept, the run as it happens', {
              'application/json': Type.Ref('ExecuteResponse'),
              'application/x-ndjson': Type.String({ description: `One event per line (empty lines are keep-alives): ${STREAMED_RUN}` }),
              'text/event-stream': Type.String({ description: `Server-Sent Events (\`event:\` the type, \`data:\` the event): ${STREAMED_RUN}` }),
            }),
          },
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
    async (request, reply) => {
      const format = streamFormatOf(request.headers.accept);
      if (format) {
        const executions = services.sandbox.executions;
        return streamExecution(executions, principalOf(request), toExecuteRequest(request.body), { request, reply, format, streams });
      }
      const row = await services.sandbox.executions.execute(principalOf(request), toExecuteRequest(request.body));
      const resumed = resumedMs();
      return { ...toExecuteResponse(row), ...(resumed !== null ? { resumed: { ms: resumed } } : {}) };
    },
  );
}
