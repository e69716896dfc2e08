/** GET /v1/admin/users (administrators): every user with plan and role, and the plans the server knows. */
import { Type, type Static } from 'typebox';
import type { User } from '../../../model.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { adminOnly } from './require-admin.ts';

export const AdminUser = Type.Object(
  { id: Type.Integer(), username: Type.String(), plan: Type.String(), is_admin: Type.Boolean(), created_at: Type.String({ format: 'date-time' }) },
  { $id: 'AdminUser', title: 'AdminUser' },
);

export function toAdminUser(user: User): Static<typeof AdminUser> {
  return { id: user.id, username: user.username, plan: user.plan, is_admin: user.isAdmin, created_at: user.createdAt };
}

export const AdminUserList = Type.Object(
  {
    users: Type.Array(Type.Ref('AdminUser')),
    plans: Type.Array(Type.String(), { description: 'The plan names the server knows (SANDBOXD_PLANS and the built-in ones)' }),
    default_plan: Type.String(),
  },
  { $id: 'AdminUserList', title: 'AdminUserList' },
);

export function registerAdminUsers(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/admin/users',
    {
      schema: {
        tags: ['admin'],
        summary: 'List users and plans (administrators)',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('AdminUserList') }, { 403: 'Not an administrator' }),
      },
      onRequest: adminOnly(requireAuth),
    },
    async () => {
      const users = await services.users.list();
      return {
        users: users.map(toAdminUser),
        plans: Object.keys(services.config.auth.plans).sort(),
        default_plan: services.config.auth.defaultPlan,
      };
    },
  );
}
