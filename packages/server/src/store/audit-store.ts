/** Persistence of the audit log: append-only rows, read newest first. */
import type { AuditOutcome } from '../core/model.ts';
import type { AuditEventRow, NewAuditEventRow } from './schema.ts';
import type { Executor } from './users-store.ts';

export async function insertAuditEvent(db: Executor, entry: NewAuditEventRow): Promise<AuditEventRow> {
  return db.insertInto('audit_events').values(entry).returningAll().executeTakeFirstOrThrow();
}

export interface AuditFilter {
  /** Only this user's entries; undefined = everyone's (administrators). */
  userId?: number;
  outcome?: AuditOutcome;
  action?: string;
  /** Only entries older than this position (the cursor). */
  beforeId?: number;
  limit: number;
}

export async function listAuditEvents(db: Executor, filter: AuditFilter): Promise<AuditEventRow[]> {
  let query = db.selectFrom('audit_events').selectAll();
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
  return query.orderBy('id', 'desc').limit(filter.limit).execute();
}
