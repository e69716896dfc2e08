/**
 * The audit log: who did what to what, from where, and whether it worked. Security-relevant actions
 * (sign-ins, API keys, webhook endpoints and secrets; later kills, drains and CLI approvals) call
 * `recordAudit` in the same transaction as the change, so an entry exists exactly when the change does.
 * Users read their own entries; administrators read everyone's.
 */
import type { Clock } from './clock.ts';
import { AUDIT_OUTCOMES, isOneOf, type AuditOutcome, type AuditRecord, type AuditVia } from '../model.ts';
import { decodeCursor, pageOf } from './cursor.ts';
import { badRequest } from './errors.ts';
import type { Database, Executor } from '../store/database.ts';
import { insertAuditEvent, listAuditEvents } from '../store/audit-store.ts';

export { AUDIT_OUTCOMES, type AuditOutcome, type AuditRecord, type AuditVia };

/** Who acted and from where. The API layer builds it from the request (`auditActorOf`). */
export interface AuditActor {
  /** null for a failed sign-in with an unknown username. */
  userId: number | null;
  /** The user's name, or the attempted username of a sign-in. */
  username: string | null;
  via: AuditVia;
  apiKeyId: number | null;
  sourceIp: string | null;
  userAgent: string | null;
}

export interface AuditEntry {
  actor: AuditActor;
  /** Dotted verb, object first: `auth.sign_in`, `api_key.create`, `webhook_endpoint.rotate_secret`, `vm.kill`… */
  action: string;
  target?: { type: string; id: string } | null;
  outcome: AuditOutcome;
  /** Action-specific facts for the reader (never secrets). */
  detail?: Record<string, unknown> | null;
  /** Default: now. */
  at?: Date;
}

const MAX_USER_AGENT_LENGTH = 512;

/** The actor for changes made by the server itself or the offline admin command, on a user's behalf. */
export function systemActor(userId: number | null = null, username: string | null = null): AuditActor {
  return { userId, username, via: 'system', apiKeyId: null, sourceIp: null, userAgent: null };
}

/** Appends an entry, in the caller's transaction when given one. */
export async function recordAudit(db: Executor, entry: AuditEntry): Promise<AuditRecord> {
  const { sourceIp, userAgent, ...actor } = entry.actor;
  return insertAuditEvent(db, {
    createdAt: (entry.at ?? new Date()).toISOString(),
    action: entry.action,
    outcome: entry.outcome,
    actor,
    target: entry.target ?? null,
    sourceIp,
    userAgent: userAgent?.slice(0, MAX_USER_AGENT_LENGTH) ?? null,
    detail: entry.detail ?? null,
  });
}

export interface AuditQuery {
  limit: number;
  /** The outcome: 'success' or 'failure'. */
  status?: string | null;
  action?: string | null;
  cursor?: string | null;
}

export class AuditLog {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {}

  /** Records an entry on its own (for actions that change nothing else, such as a failed sign-in). */
  async record(entry: AuditEntry): Promise<AuditRecord> {
    return recordAudit(this.database.db, { at: this.clock.now(), ...entry });
  }

  /** A page of entries, newest first: the reader's own, or everyone's for an administrator. */
  async list(reader: { userId: number; isAdmin: boolean }, query: AuditQuery): Promise<{ items: AuditRecord[]; nextCursor: string | null }> {
    const outcome = query.status || undefined;
    if (outcome !== undefined && !isOneOf(AUDIT_OUTCOMES, outcome)) throw badRequest(`status must be one of ${AUDIT_OUTCOMES.join(', ')}`);
    const entries = await listAuditEvents(this.database.db, {
      ...(reader.isAdmin ? {} : { userId: reader.userId }),
      ...(outcome !== undefined ? { outcome } : {}),
      ...(query.action ? { action: query.action } : {}),
      ...(query.cursor ? { beforeId: decodeCursor(query.cursor) } : {}),
      limit: query.limit + 1,
    });
    const page = pageOf(entries, query.limit, (entry) => entry.id);
    return { items: page.items, nextCursor: page.nextCursor };
  }
}
