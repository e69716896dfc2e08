/** GET /v1/templates/{template_id}/logs: a page of a build's log, with its progress. */
import { Type } from 'typebox';
import { MAX_LOG_WAIT_MS } from '../../../core/templates.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, MAX_RECORD_ID } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { TemplateIdParams, toTemplateLog } from './schemas.ts';

export function registerTemplateLogs(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/templates/:template_id/logs',
    {
      schema: {
        tags: ['templates'],
        summary: "A template build's log",
        description:
          "The lines the build wrote after line `after` (0: from the start), oldest first, with the build's status and step. Poll with `after` = `next_after` until `status` is no longer `building`; the log is complete before the status changes. " +
          "With `wait_seconds`, a request that finds no new line of a build under way waits up to that long for one (or for the build's end) before it answers: long polling.",
        security: BEARER_OR_API_KEY,
        params: TemplateIdParams,
        querystring: Type.Object({
          after: Type.Integer({ minimum: 0, maximum: MAX_RECORD_ID, default: 0, description: 'The id of the last line already read' }),
          limit: Type.Integer({ minimum: 1, maximum: 5000, default: 1000 }),
          wait_seconds: Type.Integer({
            minimum: 0,
            maximum: MAX_LOG_WAIT_MS / 1000,
            default: 0,
            description: 'Wait up to this long for a new line while the build runs (0: answer at once)',
          }),
        }),
        response: authedResponses({ 200: Type.Ref('TemplateLogResponse') }, { 404: 'No such template among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { after, limit, wait_seconds: waitSeconds } = request.query;
      const { template, lines } = await services.sandbox.templates.logs(principalOf(request), request.params.template_id, after, limit, waitSeconds * 1000);
      return toTemplateLog(template, lines, after);
    },
  );
}
