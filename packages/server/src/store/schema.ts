/**
 * Table types of the store. One schema for SQLite and PostgreSQL: timestamps are ISO-8601 UTC strings
 * written by the application (`toISOString()`, so they sort and compare as text on both), booleans are
 * 0/1 integers, JSON is text.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';
import type {
  ApiKeyState,
  AuditOutcome,
  AuditVia,
  CliAuthStatus,
  CustomDomainFailureReason,
  CustomDomainStatus,
  DeliveryStatus,
  DnsProvider,
  ExecutionMode,
  ExecutionStatus,
  ExecutionTrigger,
  Language,
  OnExpiry,
  SnapshotStatus,
  TemplateBuildStep,
  TemplateStatus,
  VmEndReason,
  VmSourceKind,
  VmStatus,
} from '../model.ts';

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
  status: ApiKeyState;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  deleted_at: string | null;
}

export interface SshKeysTable {
  id: Generated<number>;
  user_id: number;
  /** The user's label for the key (default: the key's comment). */
  name: string;
  /** e.g. 'ssh-ed25519', 'ecdsa-sha2-nistp256', 'ssh-rsa'. */
  key_type: string;
  /** The key in OpenSSH's one-line form without its comment: `<type> <base64 blob>`. */
  public_key: string;
  /** `SHA256:` + unpadded base64 of the blob's SHA-256, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  created_at: string;
  last_used_at: string | null;
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
  /** What its VMs start from. */
  source_kind: Generated<VmSourceKind>;
  source_id: Generated<string>;
  /** A desktop session's screen size; null: the desktop's default. */
  screen_width: number | null;
  screen_height: number | null;
  /** JSON a client facade keeps with the session (never read by the core); null: none. */
  client_data: Generated<string | null>;
  /** JSON `{"pre_stop": {"command", "timeout_seconds"}}` its VMs inherit; null: none (lifecycle-hooks-column.ts). */
  lifecycle_hooks: string | null;
  /** Seconds of idleness after which its VMs are paused; null: never (migration 0024). */
  auto_pause_seconds: Generated<number | null>;
  /** What its VMs do when their lifetime ends: 'kill' or 'pause'. */
  on_expiry: Generated<OnExpiry>;
}

export interface VmsTable {
  id: string;
  user_id: number;
  session_id: string | null;
  /** The sandboxd node that runs it. */
  node_id: string;
  /** An expired, crashed or killed VM is 'killed'; end_reason says why. */
  status: VmStatus;
  end_reason: VmEndReason | null;
  vcpu_count: number;
  memory_mb: number;
  lifetime_seconds: number;
  /** What it started from: a template or snapshot id (older rows: the variant, e.g. 'snap2'). */
  template_id: string;
  ip: string | null;
  created_at: string;
  started_at: string | null;
  expires_at: string;
  ended_at: string | null;
  name: string | null;
  /** JSON object of string to string. */
  metadata: Generated<string>;
  base_snapshot_id: string | null;
  paused_at: string | null;
  remaining_seconds: number | null;
  python_context: string | null;
  /** JSON like sessions.lifecycle_hooks: the hooks it started with; null: none. */
  lifecycle_hooks: string | null;
  /** Seconds of idleness after which it is paused; null: never (migration 0024). */
  auto_pause_seconds: Generated<number | null>;
  /** What it does when its lifetime ends: 'kill' or 'pause'. */
  on_expiry: Generated<OnExpiry>;
  /** The last use a node recorded of it (flushed every few seconds); null: none yet. */
  last_activity_at: Generated<string | null>;
}

export interface SnapshotsTable {
  id: string;
  user_id: number;
  name: string;
  status: SnapshotStatus;
  source_vm_id: string | null;
  parent_id: string | null;
  template_id: string;
  node_id: string;
  vcpu_count: number;
  memory_mb: number;
  disk_size_mb: number;
  /** bigint: PostgreSQL hands these back as strings; the store converts. */
  memory_bytes: number | string;
  disk_bytes: number | string;
  state_bytes: number | string;
  pause_ms: number;
  duration_ms: number;
  /** JSON object of string to string. */
  metadata: string;
  python_context: string | null;
  created_at: string;
}

export interface TemplatesTable {
  id: string;
  user_id: number;
  name: string;
  status: TemplateStatus;
  oci_image: string;
  image_digest: string | null;
  /** JSON: {gitCloneUrl, gitCloneBranch, envs, postBuildCmd}. */
  build_args: string;
  vcpu_count: number;
  memory_mb: number;
  node_id: string;
  /** JSON: the built image's files (TemplateImageRecord), once ready. */
  image: string | null;
  step: TemplateBuildStep | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  ready_at: string | null;
}

export interface TemplateBuildLogsTable {
  id: Generated<number>;
  template_id: string;
  line: string;
  created_at: string;
}

export interface ExecutionsTable {
  id: Generated<number>;
  user_id: number;
  session_id: string;
  vm_id: string | null;
  /** The node whose process runs it; null for records older than this column that never got a VM. */
  node_id: string | null;
  mode: ExecutionMode;
  /** `request`, or `pre_stop` for a run of the VM's pre-stop hook. */
  triggered_by: Generated<ExecutionTrigger>;
  language: Language;
  /** The code or command, cut to a bounded length. */
  source: string;
  status: ExecutionStatus;
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
  /** Rich Python results, JSON (null: none, or not Python). */
  results: string | null;
  /** A Python exception, JSON `{name, value, traceback}`. */
  exception: string | null;
  /** The extra Python context the run used; null for the session's default one. */
  python_context: string | null;
}

/** A session's extra Python context (its default context has no row). */
export interface PythonContextsTable {
  id: string;
  user_id: number;
  session_id: string;
  cwd: string;
  created_at: string;
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

export interface WebhookEndpointsTable {
  /** Public id, `we_…`. */
  id: string;
  user_id: number;
  url: string;
  description: string | null;
  /** JSON array of wildcard patterns over event types (`vm.*`, `*.failed`, `*`). */
  event_patterns: string;
  enabled: number;
  /** The signing secret (`whsec_…`), AES-256-GCM encrypted (see core/secrets/secret-box.ts). */
  secret_ciphertext: string;
  /** The secret before the last rotation; it keeps signing until previous_secret_expires_at. */
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
  /** Deleted endpoints are kept (their deliveries stay listed) but never receive anything. */
  deleted_at: string | null;
}

export interface WebhookDeliveriesTable {
  /** Order of creation (the list cursor). */
  id: Generated<number>;
  /** Public id, `wd_…`. */
  delivery_id: string;
  endpoint_id: string;
  user_id: number;
  event_id: string;
  event_type: string;
  event_group: string;
  status: DeliveryStatus;
  /** The attempt that is due next (pending) or that was made last (succeeded, failed); starts at 1. */
  scheduled_attempt: number;
  /** When the scheduled attempt is due; null once final. */
  next_retry_at: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  final_http_status: number | null;
  error_message: string | null;
  replay_of_delivery_id: string | null;
  /** A node sending an attempt holds the row until then; an expired lease (crash) lets another node resume it. */
  lease_until: string | null;
  lease_owner: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookDeliveryAttemptsTable {
  id: Generated<number>;
  /** webhook_deliveries.id */
  delivery_seq: number;
  attempt: number;
  started_at: string;
  duration_ms: number;
  http_status: number | null;
  error: string | null;
  succeeded: number;
}

export interface AuditEventsTable {
  id: Generated<number>;
  /** The acting user; null for a failed sign-in with an unknown username. */
  user_id: number | null;
  /** The acting user's name, or the attempted username of a sign-in. */
  username: string | null;
  via: AuditVia;
  api_key_id: number | null;
  /** Dotted verb, e.g. 'auth.sign_in', 'api_key.create', 'webhook_endpoint.rotate_secret'. */
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: AuditOutcome;
  source_ip: string | null;
  user_agent: string | null;
  /** JSON object with action-specific facts (never secrets), or null. */
  detail: string | null;
  created_at: string;
}

export interface CliAuthRequestsTable {
  id: Generated<number>;
  /** SHA-256 (hex) of the device code; the code itself is shown once, to the command line that started the login. */
  device_code_hash: string;
  /** Normalized user code (8 letters, no dash); shown as ABCD-EFGH. */
  user_code: string;
  /** PKCE S256 challenge: base64url(SHA-256(code_verifier)). */
  code_challenge: string;
  hostname: string;
  status: CliAuthStatus;
  /** Minimum seconds between two polls of the exchange; grows by 5 on each slow_down. */
  interval_seconds: number;
  requester_ip: string | null;
  requester_user_agent: string | null;
  /** The user who approved or denied it. */
  user_id: number | null;
  /** The key the exchange created. */
  api_key_id: number | null;
  created_at: string;
  expires_at: string;
  last_polled_at: string | null;
  decided_at: string | null;
  consumed_at: string | null;
}

export interface SharesTable {
  /** `shr_` + 20 base32 characters. */
  id: string;
  user_id: number;
  session_id: string;
  port: number;
  /** 1: anyone may open the preview; 0: only holders of a signed link (and the owner). */
  is_public: number;
  created_at: string;
  /** Null: until the share is deleted. */
  expires_at: string | null;
}

export interface CustomDomainsTable {
  /** `cd_` + 20 base32 characters. */
  id: string;
  user_id: number;
  /** Lower case, no trailing dot. At most one row per domain is `verified` (a partial unique index). */
  domain: string;
  /** Null: the claim maps session_id and port directly, or an app. */
  share_id: string | null;
  /** Null exactly when `app_id` is set (migration 0029). */
  session_id: string | null;
  port: number | null;
  /** The app it serves (migration 0029); null for a share's or a session's port. */
  app_id: string | null;
  dns_provider: DnsProvider;
  verification_token: string;
  status: CustomDomainStatus;
  failure_reason: CustomDomainFailureReason | null;
  created_at: string;
  expires_at: string;
  verified_at: string | null;
  last_checked_at: string | null;
  last_error: string | null;
  /** When the background checker is due to look at a pending claim, or to re-check a verified one; null otherwise. */
  next_check_at: string | null;
  /** When the TXT record was last found (verified claims; migration 0021). */
  record_seen_at: string | null;
  /** Checks in a row of a verified claim that did not find its record; at the limit the claim fails. */
  missed_checks: Generated<number>;
  /** The checker instance that claimed the row for a check, and until when (a node that dies lets it lapse). */
  check_lease_owner: string | null;
  check_lease_until: string | null;
}

export interface VolumesTable {
  id: string;
  user_id: number;
  name: string;
  size_mb: number;
  /** The node whose disk holds its latest image. */
  node_id: string;
  /** 1: the object store has its latest data too (another node may fetch it); 0: only `node_id` has it. */
  in_store: Generated<number>;
  created_at: string;
}

export interface VolumeAttachmentsTable {
  volume_id: string;
  vm_id: string;
  slot: number;
  mount_path: string;
  read_only: number;
  created_at: string;
}

/** The volumes a session's VMs mount (slot order). */
export interface SessionVolumesTable {
  session_id: string;
  volume_id: string;
  slot: number;
  mount_path: string;
  read_only: number;
}

/** A user's private network (migration 0027): a /24 of virtual addresses its members reach each other on. */
export interface NetworksTable {
  id: string;
  user_id: number;
  name: string;
  /** `10.250.<n>.0/24`, unique among the user's networks. */
  cidr: string;
  created_at: string;
}

/** A VM's address on a network (kept while it is paused; a row of an ended VM is no member). */
export interface NetworkMembersTable {
  network_id: string;
  vm_id: string;
  address: string;
  joined_at: string;
}

/** The networks a session's VMs join when they start. */
export interface SessionNetworksTable {
  session_id: string;
  network_id: string;
}

export interface Tables {
  users: UsersTable;
  api_keys: ApiKeysTable;
  settings: SettingsTable;
  sessions: SessionsTable;
  vms: VmsTable;
  executions: ExecutionsTable;
  python_contexts: PythonContextsTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  audit_events: AuditEventsTable;
  cli_auth_requests: CliAuthRequestsTable;
  shares: SharesTable;
  snapshots: SnapshotsTable;
  templates: TemplatesTable;
  template_build_logs: TemplateBuildLogsTable;
  custom_domains: CustomDomainsTable;
  volumes: VolumesTable;
  browser_sessions: BrowserSessionsTable;
  browser_usage: BrowserUsageTable;
  desktop_recordings: DesktopRecordingsTable;
  browser_credentials: BrowserCredentialsTable;
  volume_attachments: VolumeAttachmentsTable;
  session_volumes: SessionVolumesTable;
  cluster_nodes: ClusterNodesTable;
  pty_attach_tokens: PtyAttachTokensTable;
  ssh_keys: SshKeysTable;
  egress_policies: EgressPoliciesTable;
  egress_log: EgressLogTable;
  vaults: VaultsTable;
  vault_secrets: VaultSecretsTable;
  session_vault_placeholders: SessionVaultPlaceholdersTable;
  vault_request_logs: VaultRequestLogsTable;
  console_sessions: ConsoleSessionsTable;
  sign_in_failures: SignInFailuresTable;
  networks: NetworksTable;
  network_members: NetworkMembersTable;
  session_networks: SessionNetworksTable;
  apps: AppsTable;
  app_deployments: AppDeploymentsTable;
}

/** A web console session (migration 0019): its cookie holds a random token, of which only the SHA-256 is kept. */
export interface ConsoleSessionsTable {
  /** `cs_` + 20 base32 characters: names the session (its CSRF token is derived from it), never a credential. */
  id: string;
  token_hash: string;
  user_id: number;
  /** The API key the session was signed in with (it ends with the key), or null for a password sign-in. */
  api_key_id: number | null;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/** One failed (or, while it runs, one pending) sign-in attempt, counted per username and per source address. */
export interface SignInFailuresTable {
  id: Generated<number>;
  /** The username tried; null for an API key sign-in. */
  username: string | null;
  /** The source address (an IPv6 address's /64), or null when unknown. */
  source: string | null;
  at: string;
}

/** A VM's or a session's egress policy (migration 0017); no row: the deployment's default. */
export interface EgressPoliciesTable {
  subject_kind: 'vm' | 'session';
  subject_id: string;
  user_id: number;
  /** JSON of `EgressPolicy` (core/egress-policy.ts). */
  policy: string;
  updated_at: string;
}

/** One connection attempt of a VM under a restricted egress policy. */
export interface EgressLogTable {
  id: Generated<number>;
  vm_id: string;
  user_id: number;
  at: string;
  protocol: string;
  scheme: string | null;
  name: string | null;
  address: string | null;
  port: number | null;
  bytes_sent: number | null;
  bytes_received: number | null;
  verdict: 'allowed' | 'refused';
  reason: string | null;
}

/** A user's vault: a named group of secrets (migration 0018). */
export interface VaultsTable {
  /** `vlt_` + 16 base32 characters. */
  id: string;
  user_id: number;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

/** One secret of a vault; its value only ever sealed. */
export interface VaultSecretsTable {
  vault_id: string;
  /** The environment variable a VM sees its placeholder in. */
  name: string;
  /** `SecretBox.seal(value, "<vault_id>/<name>")`. */
  sealed_value: string;
  /** JSON array of host patterns (`api.example.com`, `*.example.com`). */
  allowed_hosts: string;
  /** JSON of its injection point (core/vault/injection.ts `Injection`; migration 0020). */
  inject: string;
  created_at: string;
  updated_at: string;
}

/** The placeholder a session holds for one secret of an attached vault (the value of its env variable). */
export interface SessionVaultPlaceholdersTable {
  session_id: string;
  user_id: number;
  vault_id: string;
  secret_name: string;
  placeholder: string;
  created_at: string;
}

/** One use of a secret by a VM (substituted), or its placeholder seen going to a host it is not bound to (flagged). */
export interface VaultRequestLogsTable {
  id: Generated<number>;
  vault_id: string;
  user_id: number;
  secret_name: string;
  session_id: string;
  vm_id: string;
  at: string;
  outcome: 'substituted' | 'flagged';
  scheme: string;
  host: string;
  method: string | null;
  path: string | null;
  status: number | null;
  detail: string | null;
}

export type VolumeRow = Selectable<VolumesTable>;

export type SessionRow = Selectable<SessionsTable>;
export type VmRow = Selectable<VmsTable>;
export type ExecutionRow = Selectable<ExecutionsTable>;
export type EventRow = Selectable<EventsTable>;

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;
export type SshKeyRow = Selectable<SshKeysTable>;
export type NewSshKeyRow = Insertable<SshKeysTable>;

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type NewWebhookDeliveryRow = Insertable<WebhookDeliveriesTable>;
export type WebhookDeliveryUpdate = Updateable<WebhookDeliveriesTable>;
export type WebhookDeliveryAttemptRow = Selectable<WebhookDeliveryAttemptsTable>;
export type AuditEventRow = Selectable<AuditEventsTable>;
export type NewAuditEventRow = Insertable<AuditEventsTable>;
export type CliAuthRequestRow = Selectable<CliAuthRequestsTable>;
export type NewCliAuthRequestRow = Insertable<CliAuthRequestsTable>;
export type CliAuthRequestUpdate = Updateable<CliAuthRequestsTable>;
export type ShareRow = Selectable<SharesTable>;
export type SnapshotRow = Selectable<SnapshotsTable>;
export type TemplateRow = Selectable<TemplatesTable>;
export type NewShareRow = Insertable<SharesTable>;
export type CustomDomainRow = Selectable<CustomDomainsTable>;
export type CustomDomainUpdate = Updateable<CustomDomainsTable>;

export interface BrowserSessionsTable {
  id: string;
  user_id: number;
  vm_id: string;
  node_id: string;
  /** 'active' | 'closed' | 'expired' | 'failed' */
  status: string;
  viewport_width: number;
  viewport_height: number;
  user_agent: string | null;
  idle_timeout_seconds: number;
  url: string;
  pages_visited: number;
  screenshots_taken: number;
  usage_id: number | null;
  created_at: string;
  last_activity: string;
  lifetime_ends_at: string;
  closed_at: string | null;
  end_reason: string | null;
}
export type BrowserSessionRow = Selectable<BrowserSessionsTable>;

export interface BrowserUsageTable {
  id: Generated<number>;
  user_id: number;
  /** 'render' | 'session' */
  kind: string;
  session_id: string | null;
  url: string | null;
  /** 'ok' | 'failed' | 'active' */
  status: string;
  error: string | null;
  pages: number;
  screenshots: number;
  duration_ms: number;
  screenshot_key: string | null;
  screenshot_format: string | null;
  screenshot_bytes: number | null;
  created_at: string;
}
export type BrowserUsageRow = Selectable<BrowserUsageTable>;

export interface BrowserCredentialsTable {
  id: string;
  user_id: number;
  name: string;
  username: string;
  /** The password, sealed with the server's secret box. */
  secret_sealed: string;
  /** JSON array of host names. */
  allowed_hosts: string;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}
export type BrowserCredentialRow = Selectable<BrowserCredentialsTable>;

/** A desktop recording saved from a VM into the object store (or that failed to be). */
export interface DesktopRecordingsTable {
  /** The in-VM recording id, `rec_` + 16 hex. */
  id: string;
  user_id: number;
  session_id: string;
  vm_id: string;
  /** 'saving' | 'ready' | 'failed' */
  status: string;
  duration_seconds: number | null;
  size_bytes: number | null;
  width: number;
  height: number;
  object_key: string | null;
  error: string | null;
  started_at: string;
  stopped_at: string;
  created_at: string;
  saved_at: string | null;
}
export type DesktopRecordingRow = Selectable<DesktopRecordingsTable>;

/** A sandboxd node of the deployment (one row single-node): capacity, load, heartbeat, drain state. */
export interface ClusterNodesTable {
  id: string;
  /** Base URL other nodes reach it at for internal traffic (signed with the cluster secret). */
  internal_url: string;
  /** 'live' | 'dead' (missed its heartbeats) | 'left' (shut down cleanly) */
  state: string;
  /** 1: no new VMs are placed on it. */
  drained: number;
  /** null | 'draining' | 'done' | 'cancelled' */
  deployment_drain: string | null;
  vcpus: number;
  memory_mb: number;
  vm_slots: number;
  /** JSON array of the template ids whose files this node has. */
  templates: string;
  running_vms: number;
  used_vcpus: number;
  used_memory_mb: number;
  version: string;
  started_at: string;
  heartbeat_at: string;
  dead_at: string | null;
}
export type ClusterNodeRow = Selectable<ClusterNodesTable>;

/** A single-use terminal attach token (its SHA-256), valid on every node until `expires_at`. */
export interface PtyAttachTokensTable {
  token_hash: string;
  user_id: number;
  vm_id: string;
  pty_id: string;
  expires_at: string;
}
export type PtyAttachTokenRow = Selectable<PtyAttachTokensTable>;
export type ConsoleSessionRow = Selectable<ConsoleSessionsTable>;

/** An app (migration 0028): a user's named service at `<name>--<handle>.<app domain>`. */
export interface AppsTable {
  /** `app-` + 12 base32 characters. */
  id: string;
  user_id: number;
  name: string;
  /** `<name>--<handle>`: the first label of the app's host name (unique). */
  host_label: string;
  status: string;
  live_version: number | null;
  latest_version: number;
  replicas: number;
  is_public: number;
  /** The live version's port (null until a version is live). */
  live_port: number | null;
  /** JSON array of the VM ids that serve the app now: the proxy's one read per request. */
  live_vm_ids: string;
  /** The node whose supervisor looks after the app. */
  node_id: string;
  created_at: string;
  updated_at: string;
}

/** A version of an app (migration 0028). */
export interface AppDeploymentsTable {
  app_id: string;
  version: number;
  status: string;
  /** JSON: the manifest as validated (aliases resolved, defaults applied). */
  manifest: string;
  /** JSON array: the sessions of its replicas, in replica order. */
  session_ids: string;
  /** JSON array: their VMs, in replica order. */
  vm_ids: string;
  /** The snapshot of its installed VM (`app-<id>-v<N>`), once taken. */
  snapshot_id: string | null;
  error: string | null;
  /** The deployment's log once its job ended (while it runs, the log lives in the node's memory). */
  log: string;
  created_at: string;
  live_at: string | null;
  ended_at: string | null;
}
