/** GET /v1/admin/…: operations for administrators (403 for anyone else). */
import type { AdminNodeList, AdminStorage, AdminStorageGc, AdminUser, AdminUserList } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

export class Admin {
  constructor(private readonly transport: Transport) {}

  /** Every user with plan and role, and the plans the server knows. */
  users(options: CallOptions = {}): Promise<AdminUserList> {
    return this.transport.call('/v1/admin/users', 'get', { signal: options.signal });
  }

  /** Moves a user to another plan (one of `users().plans`); its limits apply from the user's next request. */
  setUserPlan(userId: number, plan: string, options: CallOptions = {}): Promise<AdminUser> {
    return this.transport.call('/v1/admin/users/{user_id}', 'patch', { params: { user_id: userId }, json: { plan }, signal: options.signal });
  }

  /** The nodes of the deployment with state, capacity and load. */
  nodes(options: CallOptions = {}): Promise<AdminNodeList> {
    return this.transport.call('/v1/admin/nodes', 'get', { signal: options.signal });
  }

  /** What the cluster's object store holds of paused VMs, snapshots and templates (by kind and user), and each node's cache. */
  storage(options: CallOptions = {}): Promise<AdminStorage> {
    return this.transport.call('/v1/admin/storage', 'get', { signal: options.signal });
  }

  /** Collects the object store's garbage now (`dryRun`: counts what it would delete). */
  collectGarbage(options: CallOptions & { dryRun?: boolean } = {}): Promise<AdminStorageGc> {
    return this.transport.call('/v1/admin/storage/gc', 'post', { query: { dry_run: options.dryRun }, signal: options.signal });
  }
}
