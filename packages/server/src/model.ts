/**
 * The domain records the core works with and the store returns: sessions, VMs and executions, with every
 * status, mode, language and end reason as a closed union. The store parses JSON columns and 0/1 booleans
 * into these once (`src/store/*-store.ts`); the API shapes them into responses. Each union has its list of
 * values beside it, so route schemas can publish them and validation can check them.
 *
 * The ground floor: it imports nothing of the project, so every floor (store, core, api…) may use it.
 */

/**
 * Lifecycle of a VM record: `starting` (reserved, being restored), `active`, `paused` (its memory and disk on this
 * node's disk, no process; resumed under the same id), `killed` (ended, `endReason` says why).
 */
export const VM_STATUSES = ['starting', 'active', 'paused', 'killed'] as const;
export type VmStatus = (typeof VM_STATUSES)[number];

/** Statuses that hold resources (count against quotas) and that the engine may still be running. */
export const LIVE_VM_STATUSES = ['starting', 'active'] as const satisfies readonly VmStatus[];

/**
 * Why a VM ended: `killed` on request, `expired` at the end of its lifetime, `crashed` (its hypervisor died or
 * its set-up failed after it was handed out), `failed` (it never started), `server_restart` (it did not
 * survive a restart of its server), `server_shutdown` (its server stopped and killed it), `agent_lost` (its
 * agent could not be reached again, so the server killed it), `node_lost` (its node stopped heartbeating and
 * was declared dead by another node of the cluster; the node kills it if it comes back).
 */
export const VM_END_REASONS = ['killed', 'expired', 'crashed', 'failed', 'server_restart', 'server_shutdown', 'agent_lost', 'node_lost'] as const;
export type VmEndReason = (typeof VM_END_REASONS)[number];

/**
 * Why a VM ended, in the words users and webhook receivers read (`reason` of every `vm.*` ending event, and
 * the VM record's `end_reason`): `user_kill` (DELETE, POST /kill, a session's kill), `lifetime` (its
 * `vm_lifetime_seconds` ran out), `node_lost` (its cluster node was declared dead), `server_stop` (its server
 * shut down or restarted without it), `error` (it crashed, its agent was lost, or it never started). The
 * specific `VmEndReason` stays beside it as `detail` / `end_detail`.
 */
export const VM_END_CAUSES = ['user_kill', 'lifetime', 'node_lost', 'server_stop', 'error'] as const;
export type VmEndCause = (typeof VM_END_CAUSES)[number];

/** The documented cause of a specific end reason (see `VM_END_CAUSES`). */
export function endCauseOf(reason: VmEndReason): VmEndCause {
  switch (reason) {
    case 'killed':
      return 'user_kill';
    case 'expired':
      return 'lifetime';
    case 'node_lost':
      return 'node_lost';
    case 'server_restart':
    case 'server_shutdown':
      return 'server_stop';
    case 'crashed':
    case 'agent_lost':
    case 'failed':
      return 'error';
  }
}

/**
 * A bash command run in the VM before it is stopped on purpose (killed on request, paused, or at the end of
 * its lifetime), bounded by `timeoutSeconds`; the stop goes on when it ends or times out. Never run when the
 * VM is already gone (crashed, agent lost, node lost).
 */
export interface PreStopHook {
  command: string;
  timeoutSeconds: number;
}

/** Commands a session or VM asks to run at points of its VM's life (today: before a stop). */
export interface LifecycleHooks {
  preStop: PreStopHook | null;
}

/** What stopped a VM whose pre-stop hook runs. */
export const PRE_STOP_TRIGGERS = ['user_kill', 'lifetime', 'pause'] as const;
export type PreStopTrigger = (typeof PRE_STOP_TRIGGERS)[number];

/** Lifecycle of an execution record; the first two are in flight, the rest final. */
export const EXECUTION_STATUSES = ['queued', 'running', 'completed', 'failed', 'timeout'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export const IN_FLIGHT_EXECUTION_STATUSES = ['queued', 'running'] as const satisfies readonly ExecutionStatus[];

/** `sync`: the caller waited (POST /execute); `async`: it got a task id at once. */
export const EXECUTION_MODES = ['sync', 'async'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/** Who started an execution: a `request` (execute, execute_async, MCP…) or the VM's `pre_stop` hook. */
export const EXECUTION_TRIGGERS = ['request', 'pre_stop'] as const;
export type ExecutionTrigger = (typeof EXECUTION_TRIGGERS)[number];

/** python runs in the session's stateful interpreter; bash and node run a fresh process. */
export const LANGUAGES = ['python', 'bash', 'node'] as const;
export type Language = (typeof LANGUAGES)[number];

/** What a session's VMs start from: a template (by id; `default` is the built-in image) or a snapshot (by id). */
export const VM_SOURCE_KINDS = ['template', 'snapshot'] as const;
export type VmSourceKind = (typeof VM_SOURCE_KINDS)[number];
export interface VmSourceRef {
  kind: VmSourceKind;
  id: string;
}

/** The built-in template every VM starts from unless told otherwise. */
export const DEFAULT_TEMPLATE_ID = 'default';

/** The built-in desktop template (computer use): an X desktop with VNC, its VMs of a fixed shape. */
export const DESKTOP_TEMPLATE_ID = 'desktop';

/** The built-in docker template: Docker (dockerd, containerd, compose v1) running inside the VM, its VMs of a fixed shape. */
export const DOCKER_TEMPLATE_ID = 'docker';

/** What a VM does when its lifetime ends: it is killed (the default), or paused (resumed by its next use). */
export const ON_EXPIRY_ACTIONS = ['kill', 'pause'] as const;
export type OnExpiry = (typeof ON_EXPIRY_ACTIONS)[number];

/** The bounds of `auto_pause` (seconds of idleness after which a VM is paused): 10 s to 30 days. */
export const AUTO_PAUSE_MIN_SECONDS = 10;
export const AUTO_PAUSE_MAX_SECONDS = 2_592_000;

/** What a new session asks for (the request's fields, defaults applied). */
export interface SessionSpec {
  vmLifetimeSeconds: number;
  memoryMb: number;
  vcpuCount: number;
  metadata: Record<string, string>;
  /** Never logged or returned. */
  env: Record<string, string>;
  prewarm: boolean;
  /** What its VMs start from (default: the built-in template). */
  source: VmSourceRef;
  /** A desktop session's screen size (null: the desktop's default, 1280×800). */
  screen: { width: number; height: number } | null;
  /** Hooks every VM of the session inherits (null: none). */
  lifecycleHooks: LifecycleHooks | null;
  /**
   * What a client facade (the E2B-compatible API) keeps with the session: stored and returned, never read by the
   * core. Null for sessions made through the native API.
   */
  clientData: Record<string, unknown> | null;
  /** Seconds of idleness after which its VMs are paused (null: never); each VM inherits it when it starts. */
  autoPauseSeconds: number | null;
  /** What its VMs do when their lifetime ends (each VM inherits it when it starts). */
  onExpiry: OnExpiry;
}

/** A user's handle on "a sandbox over time", bound to at most one VM at a time. */
export interface Session extends SessionSpec {
  /** UUID v4. */
  id: string;
  userId: number;
  currentVmId: string | null;
  createdAt: string;
  /** When it was last used (an execute writes it at most once a minute). */
  lastActivityAt: string;
}

/** A VM record: the history and state of one VM (the engine keeps the running process). */
export interface Vm {
  /** `vm-` + 16 base32 characters; also the guest's host name. */
  id: string;
  userId: number;
  sessionId: string | null;
  /** The sandboxd node that runs it. */
  nodeId: string;
  status: VmStatus;
  /** Set once `status` is `killed`. */
  endReason: VmEndReason | null;
  vcpuCount: number;
  memoryMb: number;
  lifetimeSeconds: number;
  /** What it started from: a template id (`default`…) or a snapshot id (older records: the variant, `snap2`). */
  templateId: string;
  ip: string | null;
  createdAt: string;
  startedAt: string | null;
  /** While paused: when it would have expired had it run on (`remainingSeconds` is what counts). */
  expiresAt: string;
  endedAt: string | null;
  /** A name of the user's choosing (not unique). */
  name: string | null;
  metadata: Record<string, string>;
  /** The snapshot its disk builds on now (it was cloned from it, or snapshotted into it): that one must be kept. */
  baseSnapshotId: string | null;
  pausedAt: string | null;
  /** Lifetime left when it was paused, seconds; counted again from the resume. */
  remainingSeconds: number | null;
  /**
   * The Python interpreter context its session's code runs in: the session's id for a new VM, the snapshot's for a
   * clone (whose memory holds the interpreter of the VM it was taken of). Null in older records: the session's id.
   */
  pythonContext: string | null;
  /** Its own hooks, or those it inherited from its session when it started (null: none). */
  lifecycleHooks: LifecycleHooks | null;
  /** Seconds of idleness after which it is paused (null: never); its own, or its session's when it started. */
  autoPauseSeconds: number | null;
  /** What it does when its lifetime ends: killed, or paused. */
  onExpiry: OnExpiry;
  /** The last use any node recorded of it (written every few seconds at most; null: none recorded yet). */
  lastActivityAt: string | null;
}

/** `creating`: its name is reserved and the VM is being captured; `ready`: VMs may start from it. */
export const SNAPSHOT_STATUSES = ['creating', 'ready'] as const;
export type SnapshotStatus = (typeof SNAPSHOT_STATUSES)[number];

/** A persistent volume: an ext4 filesystem image on one node, owned by one user, that outlives VMs. */
export interface Volume {
  /** `vol_` + 16 base32 characters. */
  id: string;
  userId: number;
  /** Unique among the user's volumes. */
  name: string;
  sizeMb: number;
  /**
   * The node that holds its latest image. Only VMs on that node can mount it, unless the cluster's object store has
   * its latest data too (`inStore`): then any node fetches it and becomes its node.
   */
  nodeId: string;
  inStore: boolean;
  createdAt: string;
}

/** A volume mounted in a VM (kept after the VM ends). */
export interface VolumeAttachment {
  volumeId: string;
  vmId: string;
  /** The VM's volume slot, 0 to 3 (its order in the VM's request). */
  slot: number;
  mountPath: string;
  readOnly: boolean;
  createdAt: string;
}

/** A restorable state of a VM: memory, device state and a disk layer over its parent's. */
export interface Snapshot {
  /** `snap_` + 16 base32 characters. */
  id: string;
  userId: number;
  /** Unique among the user's snapshots and templates. */
  name: string;
  status: SnapshotStatus;
  /** The VM it was taken of (it may have ended since). */
  sourceVmId: string | null;
  /** The snapshot its disk layer builds on (null: it builds on its template's). */
  parentId: string | null;
  /** The template the chain starts from. */
  templateId: string;
  /** The node that holds its files. */
  nodeId: string;
  vcpuCount: number;
  memoryMb: number;
  diskSizeMb: number;
  /** Bytes on disk: the memory file (sparse), the disk layer (only what changed since the parent), the device state. */
  memoryBytes: number;
  diskBytes: number;
  stateBytes: number;
  /** How long the VM was stopped while it was taken, and the whole capture. */
  pauseMs: number;
  durationMs: number;
  metadata: Record<string, string>;
  /** The Python context of the VM it was taken of (its clones go on in it). */
  pythonContext: string | null;
  createdAt: string;
}

/** A template build's lifecycle. */
export const TEMPLATE_STATUSES = ['building', 'ready', 'failed'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];

/** The steps of a template build, in order; a failed build names the one it failed in. */
export const TEMPLATE_BUILD_STEPS = ['resolve', 'pull', 'unpack', 'runtime', 'mkfs', 'boot', 'git_clone', 'post_build_cmd', 'snapshot'] as const;
export type TemplateBuildStep = (typeof TEMPLATE_BUILD_STEPS)[number];

/** What runs inside the build VM after the image booted. */
export interface TemplateBuildArgs {
  gitCloneUrl: string | null;
  gitCloneBranch: string | null;
  /**
   * The environment of `postBuildCmd`, by name. Stored with empty values: the build keeps the values in memory
   * only (they may be tokens), so they are never written to the store, logged or returned.
   */
  envs: Record<string, string>;
  postBuildCmd: string | null;
}

/** The bootable files of a built template (node-local paths). */
export interface TemplateImageRecord {
  hash: string;
  kernelPath: string;
  initrdPath: string;
  rootfsPath: string;
  rootfsFormat: 'raw' | 'qcow2';
  kernelArgs: string[];
  diskSizeMb: number;
  /** The image config's environment (applied to the template's VMs). */
  env: Record<string, string>;
  /** Where its snapshot set lives (beside its files); absent: the engine's shared snapshot root. */
  snapshotRoot?: string;
}

/** A template a user built from an OCI image. */
export interface Template {
  /** `tpl_` + 16 base32 characters. */
  id: string;
  userId: number;
  /** Unique among the user's snapshots and templates. */
  name: string;
  status: TemplateStatus;
  ociImage: string;
  /** The manifest digest actually pulled. */
  imageDigest: string | null;
  buildArgs: TemplateBuildArgs;
  /** The shape its build VM had. */
  vcpuCount: number;
  memoryMb: number;
  /** The node that built it and holds its files. */
  nodeId: string;
  image: TemplateImageRecord | null;
  /** The step under way, or the one a failed build failed in. */
  step: TemplateBuildStep | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  readyAt: string | null;
}

/** One run of code or a command, and its outcome once final. */
export interface Execution {
  id: number;
  userId: number;
  sessionId: string;
  vmId: string | null;
  /**
   * The node whose process runs it (and holds its result until it is written); null only for records from
   * before nodes were recorded that never got a VM.
   */
  nodeId: string | null;
  mode: ExecutionMode;
  /** `pre_stop`: the VM's pre-stop hook ran it, not a request. */
  trigger: ExecutionTrigger;
  language: Language;
  /** The code or command, cut to a bounded length. */
  source: string;
  status: ExecutionStatus;
  exitCode: number | null;
  error: string | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /** Seconds. */
  executionTime: number | null;
  /** CPU seconds used by the code. */
  cpuTime: number | null;
  /** Python's rich results (display data, figures, the last value), in order; empty for commands. */
  results: PythonRichResult[];
  /** The exception a Python run ended with. */
  exception: PythonException | null;
  /** The extra Python context it ran in; null for the session's default one. */
  contextId: string | null;
}

/** One rich result of a Python run: each format it shows itself in (images base64); `text` is always there. */
export interface PythonRichResult {
  text?: string;
  html?: string;
  markdown?: string;
  svg?: string;
  png?: string;
  jpeg?: string;
  pdf?: string;
  latex?: string;
  json?: unknown;
  javascript?: string;
  /** The cell's last expression's value (else a `display()` call or a figure left open). */
  isMainResult: boolean;
}

/** An exception a Python run ended with. */
export interface PythonException {
  name: string;
  value: string;
  traceback: string;
}

/** A session's Python context: an interpreter of its own in the session's VM. */
export interface PythonContext {
  id: string;
  userId: number;
  sessionId: string;
  /** Where its interpreter starts. */
  cwd: string;
  createdAt: string;
}

/** True for the values of a closed union (narrows text from outside, e.g. a query parameter). */
export function isOneOf<const T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** A stored API key: `deleted` keys are kept for the audit trail but never authenticate. */
export const API_KEY_STATES = ['active', 'deleted'] as const;
export type ApiKeyState = (typeof API_KEY_STATES)[number];

/** Command-line login: `pending → approved → consumed`, `pending → denied`. */
export const CLI_AUTH_STATUSES = ['pending', 'approved', 'denied', 'consumed'] as const;
export type CliAuthStatus = (typeof CLI_AUTH_STATUSES)[number];

/** A webhook delivery (see core/webhooks/deliveries.ts for the transitions). */
export const DELIVERY_STATUSES = ['pending', 'delivering', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** How an audited actor proved who they are: a password sign-in, an API key, a bearer token, or none (the server itself, the admin CLI). */
export const AUDIT_VIAS = ['password', 'api_key', 'access_token', 'ssh_key', 'session_token', 'system'] as const;
export type AuditVia = (typeof AUDIT_VIAS)[number];

export const AUDIT_OUTCOMES = ['success', 'failure'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** A user account (the password hash stays in the store but for sign-in). */
export interface User {
  id: number;
  username: string;
  plan: string;
  isAdmin: boolean;
  createdAt: string;
}

/** A port of a session opened to others through the preview proxy. */
export interface Share {
  /** `shr_` + 20 base32 characters. */
  id: string;
  userId: number;
  sessionId: string;
  port: number;
  /** Anyone may open it; otherwise only holders of a signed link (and the owner). */
  isPublic: boolean;
  createdAt: string;
  /** Null: until the share is deleted. */
  expiresAt: string | null;
}

/** An event of the outbox, as read back. */
export interface EventRecord {
  /** Outbox position (the SSE id). */
  seq: number;
  /** Public id, `evt_…`. */
  id: string;
  type: string;
  group: string;
  userId: number | null;
  subjectId: string | null;
  data: Record<string, unknown>;
  createdAt: string;
}

/** A webhook endpoint as users see it. */
export interface WebhookEndpoint {
  id: string;
  userId: number;
  url: string;
  description: string | null;
  eventPatterns: string[];
  enabled: boolean;
  /** When a verification last got a 2xx answer. */
  verifiedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A webhook endpoint with what only the server reads: its sealed signing secrets and its deletion. */
export interface StoredWebhookEndpoint extends WebhookEndpoint {
  secretCiphertext: string;
  previousSecretCiphertext: string | null;
  previousSecretExpiresAt: string | null;
  deletedAt: string | null;
}

/** One attempt to send a webhook delivery. */
export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  succeeded: boolean;
}

/** An entry of the audit log. */
export interface AuditRecord {
  id: number;
  createdAt: string;
  action: string;
  outcome: AuditOutcome;
  actor: { userId: number | null; username: string | null; via: AuditVia; apiKeyId: number | null };
  target: { type: string; id: string } | null;
  sourceIp: string | null;
  userAgent: string | null;
  detail: Record<string, unknown> | null;
}

/**
 * A custom domain claim: `pending` until its DNS TXT record is seen, then `verified` (served like its share
 * or port) while the record stays (it is re-checked); `failed` is final (see `failureReason`), and a new claim
 * must be made.
 */
export const CUSTOM_DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;
export type CustomDomainStatus = (typeof CUSTOM_DOMAIN_STATUSES)[number];

/**
 * Why a claim failed: `expired` (not verified within its pending time), `verified_elsewhere` (another
 * account's claim of the same domain was verified first: a domain is served for one account only),
 * `record_missing` (a verified claim's TXT record was not found at enough re-checks in a row: whoever made the
 * claim may no longer control the domain's DNS).
 */
export const CUSTOM_DOMAIN_FAILURE_REASONS = ['expired', 'verified_elsewhere', 'record_missing'] as const;
export type CustomDomainFailureReason = (typeof CUSTOM_DOMAIN_FAILURE_REASONS)[number];

/** Who creates the TXT record: `manual` (the user, at their DNS host). Providers that sandboxd drives itself come later. */
export const DNS_PROVIDERS = ['manual'] as const;
export type DnsProvider = (typeof DNS_PROVIDERS)[number];

/** Why a custom domain stopped existing: deleted by its owner, or the share or app it served was deleted. */
export const CUSTOM_DOMAIN_DELETE_REASONS = ['deleted', 'share_deleted', 'app_deleted'] as const;
export type CustomDomainDeleteReason = (typeof CUSTOM_DOMAIN_DELETE_REASONS)[number];

/** A domain a user maps to a share, a session's port or a deployed app, proven theirs by a DNS TXT record. */
export interface CustomDomain {
  /** `cd_` + 20 base32 characters. */
  id: string;
  userId: number;
  /** Lower case, no trailing dot, ASCII (IDNs in their `xn--` form). */
  domain: string;
  /** The share it is served like; null when it maps a session's port directly (owner-only, like a private preview). */
  shareId: string | null;
  /** The session and port it serves (a share's, copied when the claim was made); null when it serves an app. */
  sessionId: string | null;
  port: number | null;
  /** The deployed app it serves (its live replicas, looked up on every request); null for a share or a port. */
  appId: string | null;
  dnsProvider: DnsProvider;
  /** The value the TXT record at `_sandboxd-challenge.<domain>` must have. */
  verificationToken: string;
  status: CustomDomainStatus;
  /** Set once `status` is `failed`. */
  failureReason: CustomDomainFailureReason | null;
  createdAt: string;
  /** A pending claim that is not verified by then fails (`expired`). */
  expiresAt: string;
  verifiedAt: string | null;
  /** When DNS was last asked (by the verify operation or the background checker). */
  lastCheckedAt: string | null;
  /** What the last check found wrong; null after a successful one. */
  lastError: string | null;
  /** When the background checker looks next (a pending claim's check, a verified one's re-check); null when failed. */
  nextCheckAt: string | null;
  /** When the TXT record was last found; null while pending. */
  recordSeenAt: string | null;
  /** Re-checks in a row of a verified claim that did not find its record (or could not ask); 0 after one that did. */
  missedChecks: number;
}
