import type { App, RouteContext } from '../../types.ts';
import { WorkerRecord } from '../workers/schemas.ts';
import { AdminNodeList, registerAdminNodes } from './nodes.ts';
import { AdminStorage, AdminStorageGc, registerAdminStorage } from './storage.ts';
import { registerAdminUserPlan } from './user-plan.ts';
import { AdminUser, AdminUserList, registerAdminUsers } from './users.ts';

export const ADMIN_SCHEMAS = [AdminUser, AdminUserList, WorkerRecord, AdminNodeList, AdminStorage, AdminStorageGc];

export function registerAdminRoutes(app: App, context: RouteContext): void {
  registerAdminUsers(app, context);
  registerAdminUserPlan(app, context);
  registerAdminNodes(app, context);
  registerAdminStorage(app, context);
}
