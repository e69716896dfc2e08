/**
 * PATCH /v1/admin/users/{user_id} (administrators): move a user to another plan (what `sandboxd user plan`
 * does offline). The new plan's limits apply to the user's next request; the change is in the audit log.
 */
import { Type } from 'typebox';
import { notFound } from '../../../core/errors.ts';
import { auditActorOf } from '../../audit-context.ts';
import { authedResponses, BEARER_OR_API_KEY, RecordId } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { adminOnly } from './require-admin.ts';
import { toAdminUser } from './users.ts';

export function registerAdminUserPlan(app: App, { services, requireAuth }: RouteContext): void {
  app.patch(
    '/v1/admin/users/:user_id',
    {
      schema: {
        tags: ['admin'],
        summary: "Change a user's plan (administrators)",
        security: BEARER_OR_API_KEY,
        params: Type.Object({ user_id: RecordId() }),
        body: Type.Object(
          { plan: Type.String({ minLength: 1, maxLength: 100, description: 'One of the plans GET /v1/admin/users lists' }) },
          { additionalProperties: false },
        ),
        response: authedResponses(
          { 200: Type.Ref('AdminUser') },
          { 400: 'Not a plan the server knows (BAD_REQUEST)', 403: 'Not an administrator', 404: 'No such user' },
        ),
      },
      onRequest: adminOnly(requireAuth),
    },
    async (request) => {
      const user = await services.users.get(request.params.user_id);
      if (!user) throw notFound(`user ${request.params.user_id}`);
      const from = user.plan;
      await services.users.setPlan(user.username, request.body.plan);
      await services.audit.record({
        actor: auditActorOf(request),
        action: 'admin.user_plan',
        target: { type: 'user', id: String(user.id) },
        outcome: 'success',
        detail: { username: user.username, from, to: request.body.plan },
      });
      return toAdminUser((await services.users.get(user.id))!);
    },
  );
}
