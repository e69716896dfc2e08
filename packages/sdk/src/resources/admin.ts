/** GET /v1/admin/…: operations for administrators (403 for anyone else). */
import type { AdminNodeList, AdminUser, AdminUserList } from '../api-types.ts';
import type { Transport } from '../transport.ts';

export class Admin {
  constructor(private readonly transport: Transport) {}

  /** Every user with plan and role, and the plans the server knows. */
  users(): Promise<AdminUserList> {
    return this.transport.call('/v1/admin/users', 'get', {});
  }

  /** Moves a user to another plan (one of `users().plans`); its limits apply from the user's next request. */
  setUserPlan(userId: number, plan: string): Promise<AdminUser> {
    return this.transport.call('/v1/admin/users/{user_id}', 'patch', { params: { user_id: userId }, json: { plan } });
  }

  /** The nodes of the deployment with state, capacity and load. */
  nodes(): Promise<AdminNodeList> {
    return this.transport.call('/v1/admin/nodes', 'get', {});
  }
}
