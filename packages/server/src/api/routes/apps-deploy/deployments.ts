/** GET /v1/apps/{app}/deployments and GET /v1/apps/{app}/deployments/{version}. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { AppParams, VersionParams } from './schemas.ts';

export function registerDeploymentRecords(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/apps/:app/deployments',
    {
      schema: {
        tags: ['apps'],
        summary: "List an app's deployments",
        description: 'Newest version first.',
        security: BEARER_OR_API_KEY,
        params: AppParams,
        response: authedResponses({ 200: Type.Ref('DeploymentList') }, { 404: 'No such app among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => ({ deployments: await services.sandbox.apps.deployments(principalOf(request), request.params.app) }),
  );
  app.get(
    '/v1/apps/:app/deployments/:version',
    {
      schema: {
        tags: ['apps'],
        summary: 'Get a deployment',
        security: BEARER_OR_API_KEY,
        params: VersionParams,
        response: authedResponses({ 200: Type.Ref('DeploymentRecord') }, { 404: 'No such app among yours, or no such version' }),
      },
      onRequest: requireAuth,
    },
    async (request) => services.sandbox.apps.deployment(principalOf(request), request.params.app, request.params.version),
  );
}
