/** GET /v1/apps, GET /v1/apps/{app}, DELETE /v1/apps/{app}. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { AppParams } from './schemas.ts';

export function registerAppRecords(app: App, { services, requireAuth }: RouteContext): void {
  const apps = () => services.sandbox.apps;
  app.get(
    '/v1/apps',
    {
      schema: {
        tags: ['apps'],
        summary: 'List your apps',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('AppList') }),
      },
      onRequest: requireAuth,
    },
    async (request) => ({ apps: await apps().list(principalOf(request)) }),
  );
  app.get(
    '/v1/apps/:app',
    {
      schema: {
        tags: ['apps'],
        summary: 'Get an app',
        security: BEARER_OR_API_KEY,
        params: AppParams,
        response: authedResponses({ 200: Type.Ref('AppRecord') }, { 404: 'No such app among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => apps().get(principalOf(request), request.params.app),
  );
  app.delete(
    '/v1/apps/:app',
    {
      schema: {
        tags: ['apps'],
        summary: 'Delete an app',
        description:
          "Its URL stops at once; a deployment under way stops at its next step; then its VMs are killed and its versions' snapshots deleted (`app.deleted`).",
        security: BEARER_OR_API_KEY,
        params: AppParams,
        response: authedResponses({ 204: Type.Null({ description: 'Deleted' }) }, { 404: 'No such app among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await apps().delete(principalOf(request), request.params.app);
      return reply.code(204).send();
    },
  );
}
