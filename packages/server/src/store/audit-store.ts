/** Persistence of the audit log: append-only rows, read newest first; `detail` is JSON text. */
import type { AuditOutcome, AuditRecord } from '../model.ts';
import type { AuditEventRow } from './schema.ts';
import type { Executor } from './database.ts';

function toAuditRecord(row: AuditEventRow): AuditRecord {
  return {
    id: row.id,
    createdAt: row.created_at,
    action: row.action,
    outcome: row.outcome,
    actor: { userId: row.user_id, username: row.username, via: row.via, apiKeyId: row.api_key_id },
    target: row.target_type !== null && row.target_id !== null ? { type: row.target_type, id: row.target_id } : null,
    sourceIp: row.source_ip,
    userAgent: row.user_agent,
    detail: row.detail ? (JSON.parse(row.detail) as Record<string, unknown>) : null,
  };
}

export async function insertAuditEvent(db: Executor, entry: Omit<AuditRecord, 'id'>): Promise<AuditRecord> {
  const row = await db
    .insertInto('audit_events')
    .values({
      user_id: entry.actor.userId,
      username: entry.actor.username,
      via: entry.actor.via,
      api_key_id: entry.actor.apiKeyId,
      action: entry.action,
      target_type: entry.target?.type ?? null,
      target_id: entry.target?.id ?? null,
      outcome: entry.outcome,
      source_ip: entry.sourceIp,
      user_agent: entry.userAgent,
      detail: entry.detail ? JSON.stringify(entry.detail) : null,
      created_at: entry.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toAuditRecord(row);
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

export async function listAuditEvents(db: Executor, filter: AuditFilter): Promise<AuditRecord[]> {
  let query = db.selectFrom('audit_events').selectAll();
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
  return (await query.orderBy('id', 'desc').limit(filter.limit).execute()).map(toAuditRecord);
}
