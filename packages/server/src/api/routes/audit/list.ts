/** GET /v1/audit/events: the caller's audit entries, newest first; administrators see everyone's. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toAuditEventRecord } from './schemas.ts';

const OptionalText = Type.Optional(Type.Union([Type.String(), Type.Null()]));

export function registerListAuditEvents(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/audit/events',
    {
      schema: {
        tags: ['audit'],
        summary: 'The audit log',
        description:
          "Security-relevant actions: sign-ins (also failed ones), API key and webhook endpoint changes, secret rotations. Your own entries, or everyone's for an administrator. Newest first; pass next_cursor as cursor for older entries.",
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          status: Type.Optional(Type.Union([Type.String({ description: 'The outcome: success or failure' }), Type.Null()])),
          action: OptionalText,
          cursor: OptionalText,
        }),
        response: authedResponses({ 200: Type.Ref('AuditEventList') }, { 400: 'Unknown status or a cursor this server did not return' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { limit, status, action, cursor } = request.query;
      const page = await services.audit.list(principalOf(request), { limit: limit ?? 100, status, action, cursor });
      return { items: page.items.map(toAuditEventRecord), next_cursor: page.nextCursor };
    },
  );
}
