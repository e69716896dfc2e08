/** POST /v1/apps/{app}/rollback and POST /v1/apps/{app}/restart. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { AppParams, AppVersion } from './schemas.ts';

export function registerRollbackAndRestart(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/apps/:app/rollback',
    {
      schema: {
        tags: ['apps'],
        summary: 'Roll an app back to an earlier version',
        description:
          "Brings `version` (default: the last version that was live before the current one) back on new VMs started from its snapshot (no install), health-checks them and switches without downtime, like a redeploy (`app.deploying`, `app.deployed`, `app.rolled_back`). The answer's deployment is that version's record.",
        security: BEARER_OR_API_KEY,
        params: AppParams,
        body: Type.Union([Type.Object({ version: Type.Optional(AppVersion) }, { additionalProperties: false }), Type.Null()]),
        response: authedResponses(
          { 202: Type.Ref('AppDeploymentAccepted') },
          { 404: 'No such app among yours, or no such version', 409: 'The version is the live one, never went live, or there is no earlier one' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const accepted = await services.sandbox.apps.rollback(principalOf(request), request.params.app, request.body?.version);
      return reply.code(202).send(accepted);
    },
  );
  app.post(
    '/v1/apps/:app/restart',
    {
      schema: {
        tags: ['apps'],
        summary: 'Restart an app',
        description:
          'Brings the live version up again on new VMs from its snapshot and switches to them without downtime; the previous VMs stop after the drain.',
        security: BEARER_OR_API_KEY,
        params: AppParams,
        response: authedResponses({ 202: Type.Ref('AppDeploymentAccepted') }, { 404: 'No such app among yours', 409: 'The app has no live version' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => reply.code(202).send(await services.sandbox.apps.restart(principalOf(request), request.params.app)),
  );
}
