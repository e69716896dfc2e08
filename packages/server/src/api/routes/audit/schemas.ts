/** The audit entry record and the mapping from the core's entry. */
import { Type, type Static } from 'typebox';
import type { AuditRecord } from '../../../core/audit.ts';
import { AUDIT_OUTCOMES, AUDIT_VIAS } from '../../../model.ts';
import { StringEnum } from '../../schemas/common.ts';

const StringOrNull = Type.Union([Type.String(), Type.Null()]);

export const AuditEventRecord = Type.Object(
  {
    id: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    action: Type.String({ description: 'e.g. auth.sign_in, api_key.create, api_key.delete, webhook_endpoint.create, webhook_endpoint.rotate_secret' }),
    outcome: StringEnum(AUDIT_OUTCOMES, { description: 'The status filter' }),
    user_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The acting user; null for a failed sign-in with an unknown username' }),
    username: Type.Union([Type.String(), Type.Null()], { description: "The acting user's name, or the username a sign-in attempted" }),
    via: StringEnum(AUDIT_VIAS, { description: 'system: the server or the admin command' }),
    api_key_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The key used, when via is api_key' }),
    target_type: StringOrNull,
    target_id: StringOrNull,
    source_ip: StringOrNull,
    user_agent: StringOrNull,
    detail: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  },
  { $id: 'AuditEvent', title: 'AuditEvent' },
);

export const AuditEventList = Type.Object(
  {
    items: Type.Array(Type.Ref('AuditEvent')),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next (older) page; null on the last page' }),
  },
  { $id: 'AuditEventList', title: 'AuditEventList' },
);

export const AUDIT_SCHEMAS = [AuditEventRecord, AuditEventList];

export function toAuditEventRecord(entry: AuditRecord): Static<typeof AuditEventRecord> {
  return {
    id: entry.id,
    created_at: entry.createdAt,
    action: entry.action,
    outcome: entry.outcome,
    user_id: entry.actor.userId,
    username: entry.actor.username,
    via: entry.actor.via,
    api_key_id: entry.actor.apiKeyId,
    target_type: entry.target?.type ?? null,
    target_id: entry.target?.id ?? null,
    source_ip: entry.sourceIp,
    user_agent: entry.userAgent,
    detail: entry.detail,
  };
}
