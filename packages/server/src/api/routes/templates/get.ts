/** GET /v1/templates/{template_id}: one of the caller's templates (or the built-in `default`). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { TemplateIdParams, toTemplateRecord } from './schemas.ts';

export function registerGetTemplate(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/templates/:template_id',
    {
      schema: {
        tags: ['templates'],
        summary: 'Get a template',
        description: 'Its status and build progress; a failed build says why in `error`.',
        security: BEARER_OR_API_KEY,
        params: TemplateIdParams,
        response: authedResponses({ 200: Type.Ref('TemplateRecord') }, { 404: 'No such template among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toTemplateRecord(await services.sandbox.templates.get(principalOf(request), request.params.template_id)),
  );
}
