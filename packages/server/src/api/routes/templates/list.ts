/** GET /v1/templates: the built-in template, then the caller's templates, newest first. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toTemplateRecord } from './schemas.ts';

export function registerListTemplates(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/templates',
    {
      schema: {
        tags: ['templates'],
        summary: "List the caller's templates",
        description: 'The built-in template (`default`) first, then yours, newest first, whatever their status.',
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          offset: Type.Integer({ minimum: 0, maximum: 2147483647, default: 0 }),
        }),
        response: authedResponses({ 200: Type.Array(Type.Ref('TemplateRecord')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => (await services.sandbox.templates.list(principalOf(request), request.query.limit, request.query.offset)).map(toTemplateRecord),
  );
}
