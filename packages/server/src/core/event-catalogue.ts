/**
 * The one catalogue of events: each type with the schema of its payload (`data`). `recordEvent` accepts only
 * these types, each with its own payload shape, so an emitter cannot invent a type or drop a field, and
 * `docs/events.md` is checked against this table by a test (`test/events-doc.test.ts`). Add an event here and
 * in the doc together. Payload fields may be added over time; none is removed or changes meaning.
 */
import { Type, type Static, type TSchema } from 'typebox';
import {
  CUSTOM_DOMAIN_DELETE_REASONS,
  CUSTOM_DOMAIN_FAILURE_REASONS,
  CUSTOM_DOMAIN_STATUSES,
  LANGUAGES,
  PRE_STOP_TRIGGERS,
  type VmEndCause,
  type VmEndReason,
} from '../model.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });
/** A string from a fixed list (the doc lists the values after "one of"). */
const OneOf = <const T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });

/**
 * The fields every "a VM ended" event carries: `reason` from the one documented set (`VM_END_CAUSES`, the VM
 * record's `end_reason`), `detail` the specific reason (the VM record's `end_detail`; what `reason` said before the set was introduced).
 */
const vmEnded = <const C extends VmEndCause, const R extends VmEndReason>(causes: readonly C[], details: readonly R[]) =>
  Type.Object({ vm_id: Type.String(), session_id: Nullable(Type.String()), reason: OneOf(causes), detail: OneOf(details), ended_at: DateTime });

const executionOutcome = <const S extends string>(statuses: readonly S[]) =>
  Type.Object({
    execution_id: Type.Integer(),
    session_id: Type.String(),
    vm_id: Nullable(Type.String()),
    language: OneOf(LANGUAGES),
    status: OneOf(statuses),
    exit_code: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    execution_time: Nullable(Type.Number()),
  });

export const EVENT_CATALOGUE = {
  'session.created': Type.Object({
    session_id: Type.String({ format: 'uuid' }),
    vm_lifetime_seconds: Type.Integer(),
    memory_mb: Type.Integer(),
    vcpu_count: Type.Integer(),
    metadata: Type.Record(Type.String(), Type.String()),
    prewarm: Type.Boolean(),
  }),
  'vm.started': Type.Object({
    vm_id: Type.String(),
    session_id: Type.String(),
    vcpu_count: Type.Integer(),
    memory_mb: Type.Integer(),
    template_id: Type.String(),
    started_at: DateTime,
    expires_at: DateTime,
  }),
  'vm.failed': Type.Object({ vm_id: Type.String(), session_id: Type.String(), reason: OneOf(['error'] as const), error: Type.String() }),
  'egress.refused': Type.Object({
    vm_id: Type.String(),
    session_id: Nullable(Type.String()),
    at: DateTime,
    protocol: OneOf(['tcp', 'udp', 'icmp', 'dns', 'other'] as const),
    name: Nullable(Type.String()),
    address: Nullable(Type.String()),
    port: Nullable(Type.Integer()),
    reason: Nullable(Type.String()),
    refusals_not_reported: Type.Integer(),
  }),
  'vm.killed': vmEnded(['user_kill', 'server_stop'], ['killed', 'server_restart', 'server_shutdown']),
  'vm.expired': vmEnded(['lifetime'], ['expired']),
  'vm.crashed': vmEnded(['error'], ['crashed']),
  'vm.agent_lost': vmEnded(['error'], ['agent_lost']),
  'vm.lost': vmEnded(['node_lost'], ['node_lost']),
  'vm.pre_stop_hook': Type.Object({
    vm_id: Type.String(),
    session_id: Type.String(),
    execution_id: Type.Integer(),
    stop: OneOf(PRE_STOP_TRIGGERS),
    status: OneOf(['completed', 'failed', 'timeout'] as const),
    exit_code: Nullable(Type.Integer()),
    timed_out: Type.Boolean(),
  }),
  'vm.snapshotted': Type.Object({
    vm_id: Type.String(),
    session_id: Nullable(Type.String()),
    snapshot_id: Type.String(),
    name: Type.String(),
    pause_ms: Type.Integer(),
    duration_ms: Type.Integer(),
    memory_bytes: Type.Integer(),
    disk_bytes: Type.Integer(),
  }),
  'vm.paused': Type.Object({
    vm_id: Type.String(),
    session_id: Nullable(Type.String()),
    paused_at: DateTime,
    remaining_seconds: Type.Integer(),
    duration_ms: Type.Integer(),
    memory_bytes: Type.Integer(),
  }),
  'vm.auto_paused': Type.Object({ vm_id: Type.String(), session_id: Nullable(Type.String()), idle_seconds: Type.Integer(), duration_ms: Type.Integer() }),
  'vm.pause_expired': Type.Object({
    vm_id: Type.String(),
    session_id: Nullable(Type.String()),
    paused_at: DateTime,
    paused_seconds: Type.Integer(),
    retention_seconds: Type.Integer(),
  }),
  'vm.resumed': Type.Object({
    vm_id: Type.String(),
    session_id: Nullable(Type.String()),
    resume_ms: Type.Integer(),
    expires_at: DateTime,
    /** True when a request that needed the VM resumed it, false for `POST /resume`. */
    auto: Type.Boolean(),
    /** The node it runs on now (with the cluster's object store, any node resumes it). */
    node_id: Type.String(),
  }),
  'vm.cloned': Type.Object({ vm_id: Type.String(), session_id: Type.String(), source_vm_id: Nullable(Type.String()), snapshot_id: Type.String() }),
  'snapshot.deleted': Type.Object({ snapshot_id: Type.String(), name: Type.String() }),
  'browser.session.created': Type.Object({ session_id: Type.String(), vm_id: Type.String(), viewport_width: Type.Integer(), viewport_height: Type.Integer() }),
  'browser.session.closed': Type.Object({
    session_id: Type.String(),
    status: OneOf(['closed', 'expired', 'failed'] as const),
    reason: OneOf(['closed', 'idle', 'lifetime', 'vm_ended', 'server_shutdown', 'server_restart'] as const),
    pages_visited: Type.Integer(),
    screenshots_taken: Type.Integer(),
    duration_seconds: Type.Number(),
  }),
  'computer_use.viewer.created': Type.Object({ session_id: Type.String(), vm_id: Type.String(), view_only: Type.Boolean(), expires_at: DateTime }),
  'computer_use.viewer.connected': Type.Object({ session_id: Type.String(), vm_id: Type.String(), view_only: Type.Boolean() }),
  'computer_use.viewer.disconnected': Type.Object({ session_id: Type.String(), vm_id: Type.String(), view_only: Type.Boolean() }),
  'computer_use.recording.stopped': Type.Object({
    session_id: Type.String(),
    vm_id: Type.String(),
    recording_id: Type.String(),
    duration_seconds: Nullable(Type.Number()),
    size_bytes: Nullable(Type.Integer()),
  }),
  'computer_use.recording.saved': Type.Object({
    session_id: Type.String(),
    recording_id: Type.String(),
    size_bytes: Type.Integer(),
    duration_seconds: Nullable(Type.Number()),
  }),
  'computer_use.recording.failed': Type.Object({ session_id: Type.String(), recording_id: Type.String(), error: Type.String() }),
  'volume.created': Type.Object({ volume_id: Type.String(), name: Type.String(), size_mb: Type.Integer() }),
  'volume.deleted': Type.Object({ volume_id: Type.String(), name: Type.String() }),
  'network.created': Type.Object({ network_id: Type.String(), name: Type.String(), cidr: Type.String() }),
  'network.deleted': Type.Object({ network_id: Type.String(), name: Type.String() }),
  'network.member_joined': Type.Object({ network_id: Type.String(), vm_id: Type.String(), address: Type.String() }),
  'network.member_left': Type.Object({ network_id: Type.String(), vm_id: Type.String(), reason: OneOf(['removed', 'vm_ended']) }),
  'template.build.started': Type.Object({ template_id: Type.String(), name: Type.String(), oci_image: Type.String() }),
  'template.build.succeeded': Type.Object({ template_id: Type.String(), name: Type.String(), image_digest: Type.String(), duration_ms: Type.Integer() }),
  'template.build.failed': Type.Object({ template_id: Type.String(), name: Type.String(), step: Type.String(), error: Type.String() }),
  'template.deleted': Type.Object({ template_id: Type.String(), name: Type.String() }),
  'execution.completed': executionOutcome(['completed']),
  'execution.failed': executionOutcome(['failed', 'timeout']),
  'file.uploaded': Type.Object({
    session_id: Type.String(),
    vm_id: Type.String(),
    path: Type.String(),
    size: Nullable(Type.Integer()),
    recursive: Type.Boolean(),
  }),
  'share.created': Type.Object({
    share_id: Type.String(),
    session_id: Type.String(),
    port: Type.Integer(),
    is_public: Type.Boolean(),
    expires_at: Nullable(DateTime),
  }),
  'share.revoked': Type.Object({ share_id: Type.String(), session_id: Type.String(), port: Type.Integer() }),
  'custom_domain.created': Type.Object({
    domain_id: Type.String(),
    domain: Type.String(),
    share_id: Nullable(Type.String()),
    session_id: Nullable(Type.String()),
    port: Nullable(Type.Integer()),
    app_id: Nullable(Type.String()),
    record_name: Type.String(),
    record_value: Type.String(),
    expires_at: DateTime,
  }),
  'custom_domain.verified': Type.Object({
    domain_id: Type.String(),
    domain: Type.String(),
    share_id: Nullable(Type.String()),
    session_id: Nullable(Type.String()),
    port: Nullable(Type.Integer()),
    app_id: Nullable(Type.String()),
    verified_at: DateTime,
  }),
  'custom_domain.failed': Type.Object({ domain_id: Type.String(), domain: Type.String(), reason: OneOf(CUSTOM_DOMAIN_FAILURE_REASONS), error: Type.String() }),
  'custom_domain.deleted': Type.Object({
    domain_id: Type.String(),
    domain: Type.String(),
    reason: OneOf(CUSTOM_DOMAIN_DELETE_REASONS),
    status: OneOf(CUSTOM_DOMAIN_STATUSES),
  }),
  'api_key.created': Type.Object({
    api_key_id: Type.Integer(),
    key_prefix: Type.String(),
    description: Nullable(Type.String()),
    expires_at: Nullable(DateTime),
  }),
  'api_key.deleted': Type.Object({ api_key_id: Type.Integer(), key_prefix: Type.String() }),
  'ssh_key.created': Type.Object({ ssh_key_id: Type.Integer(), name: Type.String(), fingerprint: Type.String() }),
  'ssh_key.deleted': Type.Object({ ssh_key_id: Type.Integer(), name: Type.String(), fingerprint: Type.String() }),
  'vault.created': Type.Object({ vault_id: Type.String(), name: Type.String(), secret_names: Type.Array(Type.String()) }),
  'vault.deleted': Type.Object({ vault_id: Type.String(), name: Type.String() }),
  'vault.placeholder_flagged': Type.Object({
    vault_id: Type.String(),
    secret_name: Type.String(),
    session_id: Type.String(),
    vm_id: Type.String(),
    scheme: Type.String(),
    host: Type.String(),
    detail: Type.String(),
  }),
  'app.created': Type.Object({ app_id: Type.String(), name: Type.String(), url: Type.String() }),
  'app.deploying': Type.Object({
    app_id: Type.String(),
    name: Type.String(),
    version: Type.Integer(),
    reason: OneOf(['deploy', 'rollback', 'restart'] as const),
  }),
  'app.deployed': Type.Object({
    app_id: Type.String(),
    name: Type.String(),
    version: Type.Integer(),
    previous_version: Nullable(Type.Integer()),
    vm_ids: Type.Array(Type.String()),
  }),
  'app.deployment_failed': Type.Object({ app_id: Type.String(), name: Type.String(), version: Type.Integer(), error: Type.String() }),
  'app.crashed': Type.Object({
    app_id: Type.String(),
    name: Type.String(),
    version: Type.Integer(),
    vm_id: Type.String(),
    replica: Type.Integer(),
    reason: OneOf(['exited', 'unhealthy', 'vm_gone'] as const),
    exit_code: Nullable(Type.Integer()),
  }),
  'app.restarted': Type.Object({
    app_id: Type.String(),
    name: Type.String(),
    version: Type.Integer(),
    vm_id: Type.String(),
    replica: Type.Integer(),
    attempt: Type.Integer(),
  }),
  'app.rolled_back': Type.Object({ app_id: Type.String(), name: Type.String(), version: Type.Integer(), from_version: Nullable(Type.Integer()) }),
  'app.deleted': Type.Object({ app_id: Type.String(), name: Type.String() }),
  'webhook.test': Type.Object({ endpoint_id: Type.String(), message: Type.String() }),
} as const;

export type EventCatalogue = typeof EVENT_CATALOGUE;
export type EventType = keyof EventCatalogue;
export type EventPayload<T extends EventType> = Static<EventCatalogue[T]>;

export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];
