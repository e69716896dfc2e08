/** Persistence of egress policies (per VM or session) and of the egress audit log. */
import type { EgressLogTable } from './schema.ts';
import type { Executor } from './database.ts';
import type { EgressLogRecord } from '../activity.ts';

export type EgressSubjectKind = 'vm' | 'session';

/** The stored policy JSON of a VM or a session, or undefined (the deployment's default). */
export async function findEgressPolicy(db: Executor, kind: EgressSubjectKind, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('egress_policies').select('policy').where('subject_kind', '=', kind).where('subject_id', '=', id).executeTakeFirst();
  return row?.policy;
}

/** Stored policies of many VMs at once. */
export async function findVmEgressPolicies(db: Executor, vmIds: string[]): Promise<Map<string, string>> {
  if (vmIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('egress_policies')
    .select(['subject_id', 'policy'])
    .where('subject_kind', '=', 'vm')
    .where('subject_id', 'in', vmIds)
    .execute();
  return new Map(rows.map((row) => [row.subject_id, row.policy]));
}

export async function upsertEgressPolicy(db: Executor, kind: EgressSubjectKind, id: string, userId: number, policy: string, at: string): Promise<void> {
  await db
    .insertInto('egress_policies')
    .values({ subject_kind: kind, subject_id: id, user_id: userId, policy, updated_at: at })
    .onConflict((c) => c.columns(['subject_kind', 'subject_id']).doUpdateSet({ policy, updated_at: at }))
    .execute();
}

export type EgressLogEntry = Omit<EgressLogTable, 'id'>;
type EgressLogRow = EgressLogEntry & { id: number };

export async function insertEgressLog(db: Executor, entries: EgressLogEntry[]): Promise<void> {
  if (entries.length) await db.insertInto('egress_log').values(entries).execute();
}

export interface EgressLogFilter {
  vmId: string;
  verdict?: 'allowed' | 'refused';
  /** ISO times, inclusive. */
  since?: string;
  until?: string;
  /** Matches the name or the address exactly. */
  destination?: string;
  beforeId?: number;
  limit: number;
}

function toEgressLogRecord(row: EgressLogRow): EgressLogRecord {
  return {
    id: row.id,
    vmId: row.vm_id,
    userId: row.user_id,
    at: row.at,
    protocol: row.protocol as EgressLogRecord['protocol'],
    scheme: row.scheme as EgressLogRecord['scheme'],
    name: row.name,
    address: row.address,
    port: row.port,
    // PostgreSQL returns bigint columns as strings.
    bytesSent: row.bytes_sent === null ? null : Number(row.bytes_sent),
    bytesReceived: row.bytes_received === null ? null : Number(row.bytes_received),
    verdict: row.verdict,
    reason: row.reason,
  };
}

/** Newest first. */
export async function listEgressLog(db: Executor, filter: EgressLogFilter): Promise<EgressLogRecord[]> {
  let query = db.selectFrom('egress_log').selectAll().where('vm_id', '=', filter.vmId);
  if (filter.verdict) query = query.where('verdict', '=', filter.verdict);
  if (filter.since) query = query.where('at', '>=', filter.since);
  if (filter.until) query = query.where('at', '<=', filter.until);
  if (filter.destination) {
    const destination = filter.destination;
    query = query.where((eb) => eb.or([eb('name', '=', destination), eb('address', '=', destination)]));
  }
  if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
  return (await query.orderBy('id', 'desc').limit(filter.limit).execute()).map(toEgressLogRecord);
}

/** Deletes entries older than `before`; resolves with how many. */
export async function pruneEgressLog(db: Executor, before: string): Promise<number> {
  const result = await db.deleteFrom('egress_log').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}
