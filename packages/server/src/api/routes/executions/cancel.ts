/** POST /v1/executions/{item_id}/cancel: stops one of the caller's runs; the VM and its other runs go on. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, RecordId } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toTaskRecord } from '../execution/schemas.ts';

export function registerCancelExecution(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/executions/:item_id/cancel',
    {
      schema: {
        tags: ['executions'],
        summary: 'Cancel a queued or running execution',
        description:
          "Stops the run and answers its final record: status `failed`, `error` saying it was cancelled. A command is killed with its whole process group; Python code is interrupted (the session's interpreter keeps its state); a run still waiting for its VM never starts. The VM and its other runs go on (POST /kill ends the whole VM). 409 when the run has already ended.",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ item_id: RecordId() }),
        response: authedResponses(
          { 200: Type.Ref('TaskRecord') },
          { 404: 'No such execution among yours', 409: 'The execution has already ended', 503: 'Another node of the cluster runs it' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => toTaskRecord(await services.sandbox.executions.cancel(principalOf(request), request.params.item_id)),
  );
}
