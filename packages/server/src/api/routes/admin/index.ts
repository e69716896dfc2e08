import type { App, RouteContext } from '../../types.ts';
import { AdminNodeList, registerAdminNodes } from './nodes.ts';
import { AdminUserList, registerAdminUsers } from './users.ts';

export const ADMIN_SCHEMAS = [AdminUserList, AdminNodeList];

export function registerAdminRoutes(app: App, context: RouteContext): void {
  registerAdminUsers(app, context);
  registerAdminNodes(app, context);
}
