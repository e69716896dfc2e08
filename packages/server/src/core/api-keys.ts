/**
 * API keys: create (the only time the full key is shown), list, get, update, delete. Every operation is
 * scoped to the calling user; another user's key id is simply "not found".
 */
import { AppError, notFound } from './errors.ts';
import { generateApiKeySecret, type ApiKeyFormat } from './auth/api-key-secrets.ts';
import { recordAudit, systemActor, type AuditActor } from './audit.ts';
import type { Clock } from './clock.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import type { Database } from '../store/database.ts';
import { findApiKey, insertApiKey, listApiKeys, updateApiKey } from '../store/api-keys-store.ts';
import { revokeConsoleSessionsOfApiKey } from '../store/console-sessions-store.ts';
import type { ApiKeyRow, ApiKeyUpdate } from '../store/schema.ts';

export interface ApiKey {
  id: number;
  keyPrefix: string;
  userId: number;
  /** 'active' or 'expired' (computed from expiresAt at read time). */
  status: 'active' | 'expired';
  createdAt: string;
  expiresAt: string | null;
  description: string | null;
  lastUsedAt: string | null;
}

export interface CreatedApiKey extends ApiKey {
  /** The complete key: returned once, never stored. */
  fullKey: string;
}

export interface ApiKeyChanges {
  /** ISO date-time, or null for "never expires"; absent = unchanged. */
  expiresAt?: string | null;
  description?: string | null;
}

const MAX_DESCRIPTION_LENGTH = 500;

export class ApiKeyService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
  ) {}

  /** `actor` is who asked, for the audit log; default: the server itself on the user's behalf (bootstrap, admin command). */
  async create(userId: number, input: ApiKeyChanges & { format?: ApiKeyFormat }, actor: AuditActor = systemActor(userId)): Promise<CreatedApiKey> {
    const now = this.clock.now();
    const expiresAt = normalizeExpiry(input.expiresAt);
    // A key that is dead on arrival is almost always a time-zone mistake: say so instead of minting it.
    if (expiresAt && Date.parse(expiresAt) <= now.getTime()) {
      throw new AppError('BAD_REQUEST', 'expires_at is in the past: give a future date-time (with a time zone), or null for a key that never expires');
    }
    const secret = generateApiKeySecret(input.format);
    const row = await this.database.db.transaction().execute(async (trx) => {
      const inserted = await insertApiKey(trx, {
        user_id: userId,
        key_hash: secret.keyHash,
        key_prefix: secret.keyPrefix,
        description: normalizeDescription(input.description),
        status: 'active',
        created_at: now.toISOString(),
        expires_at: expiresAt,
        last_used_at: null,
        deleted_at: null,
      });
      await recordEvent(trx, this.clock, {
        type: 'api_key.created',
        userId,
        subjectId: String(inserted.id),
        data: { api_key_id: inserted.id, key_prefix: inserted.key_prefix, description: inserted.description, expires_at: inserted.expires_at },
      });
      await recordAudit(trx, {
        actor,
        action: 'api_key.create',
        target: { type: 'api_key', id: String(inserted.id) },
        outcome: 'success',
        detail: { key_prefix: inserted.key_prefix },
        at: now,
      });
      return inserted;
    });
    this.notifier.committed();
    return { ...this.toApiKey(row), fullKey: secret.fullKey };
  }

  async list(userId: number): Promise<ApiKey[]> {
    return (await listApiKeys(this.database.db, userId)).map((row) => this.toApiKey(row));
  }

  async get(userId: number, id: number): Promise<ApiKey> {
    const row = await findApiKey(this.database.db, userId, id);
    if (!row) throw notFound(`API key ${id}`);
    return this.toApiKey(row);
  }

  /** Applies the fields present in `changes`; an expiry in the past expires the key at once. */
  async update(userId: number, id: number, changes: ApiKeyChanges): Promise<ApiKey> {
    const update: ApiKeyUpdate = {};
    if (changes.expiresAt !== undefined) update.expires_at = normalizeExpiry(changes.expiresAt);
    if (changes.description !== undefined) update.description = normalizeDescription(changes.description);
    const row = Object.keys(update).length > 0 ? await updateApiKey(this.database.db, userId, id, update) : await findApiKey(this.database.db, userId, id);
    if (!row) throw notFound(`API key ${id}`);
    return this.toApiKey(row);
  }

  /** Deletes a key: it stops authenticating at once, and so do the console sessions signed in with it. */
  async delete(userId: number, id: number, actor: AuditActor = systemActor(userId)): Promise<ApiKey> {
    const now = this.clock.now().toISOString();
    const row = await this.database.db.transaction().execute(async (trx) => {
      const deleted = await updateApiKey(trx, userId, id, { status: 'deleted', deleted_at: now });
      if (!deleted) throw notFound(`API key ${id}`);
      // Sessions of a deleted key are refused anyway (the key's row is read at each request); mark them ended too.
      await revokeConsoleSessionsOfApiKey(trx, deleted.id, now);
      await recordEvent(trx, this.clock, {
        type: 'api_key.deleted',
        userId,
        subjectId: String(deleted.id),
        data: { api_key_id: deleted.id, key_prefix: deleted.key_prefix },
      });
      await recordAudit(trx, {
        actor,
        action: 'api_key.delete',
        target: { type: 'api_key', id: String(deleted.id) },
        outcome: 'success',
        detail: { key_prefix: deleted.key_prefix },
        at: this.clock.now(),
      });
      return deleted;
    });
    this.notifier.committed();
    return this.toApiKey(row);
  }

  private toApiKey(row: ApiKeyRow): ApiKey {
    const expired = row.expires_at !== null && Date.parse(row.expires_at) <= this.clock.now().getTime();
    return {
      id: row.id,
      keyPrefix: row.key_prefix,
      userId: row.user_id,
      status: expired ? 'expired' : 'active',
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      description: row.description,
      lastUsedAt: row.last_used_at,
    };
  }
}

/** Stores expiries in one canonical UTC form so they compare correctly as text. */
function normalizeExpiry(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new AppError('BAD_REQUEST', `expires_at "${value}" is not a date-time`);
  return new Date(ms).toISOString();
}

function normalizeDescription(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (value.length > MAX_DESCRIPTION_LENGTH) throw new AppError('BAD_REQUEST', `description must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  return value;
}
