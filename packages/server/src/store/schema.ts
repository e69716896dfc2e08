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

export interface SessionsTable {
  /** UUID v4. */
  id: string;
  user_id: number;
  vm_lifetime_seconds: number;
  memory_mb: number;
  vcpu_count: number;
  /** JSON object of string to string. */
  metadata: string;
  /** JSON object of string to string; never logged. */
  env: string;
  prewarm: number;
  current_vm_id: string | null;
  created_at: string;
  last_activity_at: string;
}

export interface VmsTable {
  id: string;
  user_id: number;
  session_id: string | null;
  /** The sandboxd node that runs it. */
  node_id: string;
  /** 'starting' | 'active' | 'killed' (an expired, crashed or killed VM is 'killed'; end_reason says why). */
  status: string;
  /** 'killed' | 'expired' | 'crashed' | 'failed' | 'server_restart'. */
  end_reason: string | null;
  vcpu_count: number;
  memory_mb: number;
  lifetime_seconds: number;
  /** The snapshot variant it was restored from, e.g. 'snap2'. */
  template_id: string;
  ip: string | null;
  created_at: string;
  started_at: string | null;
  expires_at: string;
  ended_at: string | null;
}

export interface ExecutionsTable {
  id: Generated<number>;
  user_id: number;
  session_id: string;
  vm_id: string | null;
  /** 'sync' | 'async'. */
  mode: string;
  language: string;
  /** The code or command, cut to a bounded length. */
  source: string;
  /** 'queued' | 'running' | 'completed' | 'failed' | 'timeout'. */
  status: string;
  exit_code: number | null;
  error: string | null;
  stdout: string;
  stderr: string;
  stdout_truncated: number;
  stderr_truncated: number;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  execution_time: number | null;
  cpu_time: number | null;
}

export interface EventsTable {
  /** Order of the outbox (and the SSE event id). */
  id: Generated<number>;
  /** Public id, e.g. evt_…; receivers de-duplicate on it. */
  event_id: string;
  user_id: number | null;
  type: string;
  event_group: string;
  subject_id: string | null;
  /** JSON. */
  payload: string;
  created_at: string;
  dispatched_at: string | null;
}

export interface Tables {
  users: UsersTable;
  api_keys: ApiKeysTable;
  settings: SettingsTable;
  sessions: SessionsTable;
  vms: VmsTable;
  executions: ExecutionsTable;
  events: EventsTable;
}

export type SessionRow = Selectable<SessionsTable>;
export type VmRow = Selectable<VmsTable>;
export type ExecutionRow = Selectable<ExecutionsTable>;
export type EventRow = Selectable<EventsTable>;

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;
