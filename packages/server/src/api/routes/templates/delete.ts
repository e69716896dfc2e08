/** DELETE /v1/templates/{template_id}: delete a template nothing runs on any more (a build under way is cancelled). */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { TemplateIdParams } from './schemas.ts';

export function registerDeleteTemplate(app: App, { services, requireAuth }: RouteContext): void {
  app.delete(
    '/v1/templates/:template_id',
    {
      schema: {
        tags: ['templates'],
        summary: 'Delete a template',
        description:
          'Deletes the template and its files on its node; a build under way is cancelled. Refused (409) while a VM that has not ended (running or paused) started from it or a snapshot builds on it, and for the built-in `default`.',
        security: BEARER_OR_API_KEY,
        params: TemplateIdParams,
        response: authedResponses(
          { 204: Type.Null({ description: 'Deleted' }) },
          { 404: 'No such template among yours', 409: 'A VM or a snapshot builds on it, or it is the built-in template', 503: 'Its files are on another node' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await services.sandbox.templates.delete(principalOf(request), request.params.template_id);
      return reply.code(204).send();
    },
  );
}
