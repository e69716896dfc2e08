/**
 * Table types of the store. One schema for SQLite and PostgreSQL: timestamps are ISO-8601 UTC strings
 * written by the application (`toISOString()`, so they sort and compare as text on both), booleans are
 * 0/1 integers, JSON is text.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string;
  plan: string;
  is_admin: number;
  created_at: string;
}

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  key_hash: string;
  key_prefix: string;
  description: string | null;
  /** 'active' or 'deleted' (deleted keys are kept for the audit trail but never authenticate). */
  status: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  deleted_at: string | null;
}

export interface SettingsTable {
  name: string;
  value: string;
}

export interface Tables {
  users: UsersTable;
  api_keys: ApiKeysTable;
  settings: SettingsTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;
