/** Schemas of sessions, VMs and sandboxes (the spec's fields, plus a few documented extras). */
import { VaultIds } from '../vaults/schemas.ts';
import { NetworkRefs } from '../networks/schemas.ts';
import { EgressPolicyRef } from '../egress/schemas.ts';
import { Type, type Static } from 'typebox';
import {
  AUTO_PAUSE_MAX_SECONDS,
  AUTO_PAUSE_MIN_SECONDS,
  endCauseOf,
  ON_EXPIRY_ACTIONS,
  VM_END_CAUSES,
  VM_END_REASONS,
  VM_SOURCE_KINDS,
  VM_STATUSES,
  type LifecycleHooks,
  type Session,
  type Vm,
} from '../../../model.ts';
import type { SessionStatus } from '../../../core/sessions.ts';
import { StringEnum } from '../../schemas/common.ts';

export const VCPU_COUNTS = [1, 2, 4, 6, 8] as const;

/** An integer from a fixed set; one clear 422 (`enum`) instead of one error per allowed value. */
export const VcpuCount = Type.Unsafe<1 | 2 | 4 | 6 | 8>({
  type: 'integer',
  enum: [...VCPU_COUNTS],
  description: 'vCPUs: 1, 2, 4, 6 or 8 (selects the snapshot variant snap1…snap8)',
});
export const LifetimeSeconds = Type.Integer({ minimum: 20, maximum: 2_592_000, description: 'Seconds from spawn until the VM is killed' });
/** `auto_pause` of a request: seconds of idleness, or null (never). */
export const AutoPauseSeconds = Type.Union(
  [
    Type.Integer({
      minimum: AUTO_PAUSE_MIN_SECONDS,
      maximum: AUTO_PAUSE_MAX_SECONDS,
      description: `Seconds of idleness (${AUTO_PAUSE_MIN_SECONDS} to ${AUTO_PAUSE_MAX_SECONDS})`,
    }),
    Type.Null(),
  ],
  {
    description:
      'Pause the VM after this many seconds of idleness (no execution running or started, no terminal attached or typed into, no preview traffic, no file, process, SSH, browser or desktop call); ' +
      'null or absent: never. A paused VM keeps its memory, processes and disk, stops counting its lifetime and its quota, and is resumed by the next request that needs it ' +
      "(the answer then carries a `Sandboxd-Resumed: <ms>` header). Paused VMs are kept for your plan's retention (free 7 days, pro 30, enterprise 90), then deleted (`vm.pause_expired`).",
  },
);

/** `on_expiry` of a request. */
export const OnExpirySchema = StringEnum(ON_EXPIRY_ACTIONS, {
  description:
    "`kill` (default): the VM is killed when its lifetime ends; `pause`: it is paused instead (with its whole lifetime again for when it resumes), and kept for your plan's retention",
});

export const MemoryMb = Type.Integer({ minimum: 128, maximum: 8192, description: 'Guest memory in MiB; the guest sees exactly this much' });

export const StringMap = (description: string, keyPattern: string) =>
  Type.Record(Type.String({ pattern: keyPattern }), Type.String({ maxLength: 4096 }), { maxProperties: 64, description });

/** User-defined key/value pairs of sessions, VMs and snapshots. */
export const Metadata = (description: string) => StringMap(description, '^.{1,128}$');

/** A name of a snapshot or template: letters, digits, `.`, `_`, `-`; unique among the user's snapshots and templates. */
export const SourceName = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$',
  description: 'Letters, digits, ".", "_" and "-", at most 63, starting with a letter or digit',
});

/** Where a session's VMs (or a VM) start from, by name: a snapshot or a template; either field finds either. */
export const SourceFields = {
  snapshot: Type.Optional({ ...SourceName, description: 'Start VMs from your snapshot (or template) of this name; a snapshot fixes vCPUs and memory' }),
  template: Type.Optional({ ...SourceName, description: 'Start VMs from the template (or snapshot) of this name; "default" is the built-in image' }),
};

export const SourceSummarySchema = Type.Object(
  { kind: StringEnum(VM_SOURCE_KINDS), id: Type.String(), name: Type.String() },
  { description: 'What VMs start from: a template (`default` is the built-in image) or a snapshot' },
);

/** Hooks as requested and answered: `{"pre_stop": {"command", "timeout_seconds"}}`. */
export const LifecycleHooksSchema = Type.Object(
  {
    pre_stop: Type.Optional(
      Type.Object(
        {
          command: Type.String({
            minLength: 1,
            maxLength: 65_536,
            description: "A bash command (`bash -c`, in /root, with the session's env), e.g. `pg_dump app > /data/app.sql`",
          }),
          timeout_seconds: Type.Integer({
            minimum: 1,
            maximum: 120,
            default: 30,
            description: 'How long it may run, 1 to 120 seconds (default 30); then it is killed and the stop goes on',
          }),
        },
        {
          description:
            'Run in the VM before it is stopped on purpose: killed (DELETE /v1/vms/{vm_id}, POST /kill, a session kill), paused, or at the end of its lifetime. ' +
            'It runs like a bash execute and is kept as an execution record with `trigger: "pre_stop"` (GET /v1/executions); the stop waits for it up to `timeout_seconds`, and a `vm.pre_stop_hook` event says how it ended. ' +
            'It does not run when the VM is already gone (it crashed, its agent or its node was lost) nor when the server shuts down.',
        },
      ),
    ),
  },
  { $id: 'LifecycleHooks', title: 'LifecycleHooks', description: 'Commands the VM runs at points of its life' },
);
export type LifecycleHooksBody = Static<typeof LifecycleHooksSchema>;

/** The core's hooks from a request's `lifecycle_hooks` (absent: undefined, so a default applies). */
export function toLifecycleHooks(body: LifecycleHooksBody | undefined): LifecycleHooks | null | undefined {
  if (body === undefined) return undefined;
  return body.pre_stop ? { preStop: { command: body.pre_stop.command, timeoutSeconds: body.pre_stop.timeout_seconds } } : null;
}

/** The answer's `lifecycle_hooks` (null: none). */
export function fromLifecycleHooks(hooks: LifecycleHooks | null): LifecycleHooksBody | null {
  return hooks?.preStop ? { pre_stop: { command: hooks.preStop.command, timeout_seconds: hooks.preStop.timeoutSeconds } } : null;
}

/** `lifecycle_hooks` of a request body (by reference; typed as the schema it names). */
export const LifecycleHooksRef = Type.Ref('LifecycleHooks') as unknown as typeof LifecycleHooksSchema;

const LifecycleHooksAnswer = Type.Union([Type.Ref('LifecycleHooks'), Type.Null()], { description: 'Its lifecycle hooks (null: none)' });

export const SessionCreateRequest = Type.Object(
  {
    api_key: Type.Optional(Type.String({ description: 'The API key, for clients that send it in the body' })),
    vm_lifetime_seconds: Type.Optional({
      ...LifetimeSeconds,
      description: 'Seconds from spawn until the VM is killed; 20 to 2592000, default SANDBOXD_DEFAULT_VM_LIFETIME_SECONDS (300)',
    }),
    memory_mb: Type.Optional({ ...MemoryMb, description: 'Guest memory in MiB, 128 to 8192; default SANDBOXD_DEFAULT_MEMORY_MB (512)' }),
    vcpu_count: Type.Optional({
      ...VcpuCount,
      description: 'vCPUs: 1, 2, 4, 6 or 8, default SANDBOXD_DEFAULT_VCPUS (2) (selects the snapshot variant snap1…snap8)',
    }),
    metadata: Type.Optional(StringMap('User-defined key/value pairs, for filtering sandboxes', '^.{1,128}$')),
    env: Type.Optional(StringMap('Environment of every execution of the session', '^[A-Za-z_][A-Za-z0-9_]{0,127}$')),
    prewarm: Type.Optional(Type.Boolean({ description: 'Acquire a standard VM at once, in the background (default false)' })),
    ...SourceFields,
    screen_width: Type.Optional(
      Type.Integer({ minimum: 320, maximum: 3840, description: 'Desktop sessions (`"template": "desktop"`) only: screen width in pixels, default 1280' }),
    ),
    screen_height: Type.Optional(Type.Integer({ minimum: 320, maximum: 2160, description: 'Desktop sessions only: screen height in pixels, default 800' })),
    // Every VM of the session inherits them (see the route's description).
    lifecycle_hooks: Type.Optional(LifecycleHooksRef),
    // Every VM of the session starts with it (GET/PUT /v1/sessions/{session_id}/egress).
    egress_policy: Type.Optional(EgressPolicyRef),
    vault_ids: Type.Optional(VaultIds),
    networks: Type.Optional(NetworkRefs),
    // Every VM of the session inherits them.
    auto_pause: Type.Optional(AutoPauseSeconds),
    on_expiry: Type.Optional(OnExpirySchema),
  },
  { $id: 'SessionCreateRequest', title: 'SessionCreateRequest' },
);
export type SessionCreateBody = Static<typeof SessionCreateRequest>;

export const SessionCreateResponse = Type.Object(
  {
    session_id: Type.String({ format: 'uuid' }),
    status: StringEnum(['created', 'starting', 'active'], { description: '"created" (no VM yet), "starting" (prewarm under way) or "active"' }),
    created_at: Type.String({ format: 'date-time' }),
    vm_id: Type.Union([Type.String(), Type.Null()]),
    vm_lifetime_seconds: Type.Integer(),
    memory_mb: Type.Integer(),
    vcpu_count: Type.Integer(),
    metadata: Type.Record(Type.String(), Type.String()),
    prewarm: Type.Boolean(),
    source: SourceSummarySchema,
    lifecycle_hooks: LifecycleHooksAnswer,
    auto_pause: Type.Union([Type.Integer(), Type.Null()], { description: 'Seconds of idleness after which its VMs are paused (null: never)' }),
    on_expiry: OnExpirySchema,
  },
  { $id: 'SessionCreateResponse', title: 'SessionCreateResponse' },
);

export const SessionStatusResponse = Type.Object(
  {
    session_id: Type.String(),
    exists: Type.Boolean(),
    vm_assigned: Type.Boolean(),
    vm_alive: Type.Boolean(),
    vm_status: Type.Union([StringEnum(VM_STATUSES), Type.Null()]),
    vm_id: Type.Union([Type.String(), Type.Null()]),
    uptime_seconds: Type.Union([Type.Number(), Type.Null()]),
    expires_in_seconds: Type.Union([Type.Number(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'SessionStatus', title: 'SessionStatus' },
);

export const SandboxInfoSchema = Type.Object(
  {
    sandbox_id: Type.String(),
    template_id: Type.String(),
    name: Type.String(),
    metadata: Type.Record(Type.String(), Type.String()),
    started_at: Type.String({ format: 'date-time' }),
    end_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    status: StringEnum(VM_STATUSES),
    session_id: Type.Union([Type.String(), Type.Null()]),
    vcpu_count: Type.Integer(),
    memory_mb: Type.Integer(),
  },
  { $id: 'SandboxInfo', title: 'SandboxInfo' },
);

export const VmRecord = Type.Object(
  {
    vm_id: Type.String(),
    session_id: Type.Union([Type.String(), Type.Null()]),
    status: StringEnum(VM_STATUSES, { description: 'A killed VM ended for the reason in end_reason' }),
    end_reason: Type.Union([
      StringEnum(VM_END_CAUSES, {
        description:
          'Why the VM ended (null while it runs): `user_kill` (a kill request), `lifetime` (its lifetime ran out), `node_lost` (its cluster node was declared dead), `server_stop` (its server stopped or restarted without it) or `error` (it crashed, its agent was lost, or it never started); the same `reason` as its ending event',
      }),
      Type.Null(),
    ]),
    end_detail: Type.Union([
      StringEnum(VM_END_REASONS, {
        description:
          'The specific reason behind end_reason (null while it runs): killed, expired, crashed, failed, server_restart, server_shutdown, agent_lost or node_lost; the `detail` of its ending event',
      }),
      Type.Null(),
    ]),
    vcpu_count: Type.Integer(),
    memory_mb: Type.Integer(),
    vm_lifetime_seconds: Type.Integer(),
    template_id: Type.String(),
    node_id: Type.String(),
    vm_ip: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    expires_at: Type.String({ format: 'date-time' }),
    ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    expires_in_seconds: Type.Number({ description: 'Seconds until it is killed; 0 once ended; while paused, the lifetime it has left (it stops counting)' }),
    name: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    base_snapshot_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The snapshot its disk builds on (it was cloned from it or snapshotted into it): kept while the VM lives',
    }),
    paused_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lifecycle_hooks: LifecycleHooksAnswer,
    auto_pause: Type.Union([Type.Integer(), Type.Null()], {
      description: "Seconds of idleness after which it is paused (null: never); its own, or its session's when it started",
    }),
    on_expiry: OnExpirySchema,
    last_activity_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Its last use as recorded in the store (written every few seconds at most; null: none recorded yet)',
    }),
  },
  { $id: 'VmRecord', title: 'VmRecord' },
);

const LiveVmUsage = Type.Object(
  {
    cpu_seconds: Type.Number({ description: 'Guest CPU seconds since boot' }),
    memory_total_mb: Type.Integer(),
    memory_used_mb: Type.Integer(),
    uptime_seconds: Type.Number(),
    load_average: Type.Array(Type.Number(), { description: '1, 5 and 15 minutes' }),
  },
  { description: "The live VM's own figures while it runs" },
);

export const SessionUsage = Type.Object(
  {
    session_id: Type.String(),
    executions: Type.Integer({ description: 'Executions of the session so far' }),
    cpu_seconds: Type.Number({ description: 'CPU seconds of its executions' }),
    execution_seconds: Type.Number({ description: 'Wall-clock seconds of its executions' }),
    vcpu_count: Type.Integer(),
    memory_mb: Type.Integer(),
    vm: Type.Union([LiveVmUsage, Type.Null()]),
    vm_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Only with credentials' })),
    vm_status: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Only with credentials' })),
  },
  { $id: 'SessionUsage', title: 'SessionUsage' },
);

export const SessionIdParams = Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const SESSION_SCHEMAS = [
  LifecycleHooksSchema,
  SessionCreateRequest,
  SessionCreateResponse,
  SessionStatusResponse,
  SandboxInfoSchema,
  VmRecord,
  SessionUsage,
];

export function toVmRecord(vm: Vm, now: Date): Static<typeof VmRecord> {
  return {
    vm_id: vm.id,
    session_id: vm.sessionId,
    status: vm.status,
    end_reason: vm.endReason && endCauseOf(vm.endReason),
    end_detail: vm.endReason,
    vcpu_count: vm.vcpuCount,
    memory_mb: vm.memoryMb,
    vm_lifetime_seconds: vm.lifetimeSeconds,
    template_id: vm.templateId,
    node_id: vm.nodeId,
    vm_ip: vm.ip,
    created_at: vm.createdAt,
    started_at: vm.startedAt,
    expires_at: vm.expiresAt,
    ended_at: vm.endedAt,
    expires_in_seconds:
      vm.status === 'killed'
        ? 0
        : vm.status === 'paused'
          ? (vm.remainingSeconds ?? 0)
          : Math.max(0, Math.round((Date.parse(vm.expiresAt) - now.getTime()) / 10) / 100),
    name: vm.name,
    metadata: vm.metadata,
    base_snapshot_id: vm.baseSnapshotId,
    paused_at: vm.pausedAt,
    lifecycle_hooks: fromLifecycleHooks(vm.lifecycleHooks),
    auto_pause: vm.autoPauseSeconds,
    on_expiry: vm.onExpiry,
    last_activity_at: vm.lastActivityAt,
  };
}

export function toSessionStatus(status: SessionStatus): Static<typeof SessionStatusResponse> {
  return {
    session_id: status.session.id,
    exists: true,
    vm_assigned: status.vm !== null,
    vm_alive: status.alive,
    vm_status: status.vm?.status ?? null,
    vm_id: status.vm?.id ?? null,
    uptime_seconds: status.uptimeSeconds,
    expires_in_seconds: status.expiresInSeconds,
    created_at: status.session.createdAt,
  };
}

export function toSessionCreateResponse(session: Session, starting: boolean, source: Static<typeof SourceSummarySchema>): Static<typeof SessionCreateResponse> {
  return {
    session_id: session.id,
    status: starting ? 'starting' : 'created',
    created_at: session.createdAt,
    vm_id: null,
    vm_lifetime_seconds: session.vmLifetimeSeconds,
    memory_mb: session.memoryMb,
    vcpu_count: session.vcpuCount,
    metadata: session.metadata,
    prewarm: session.prewarm,
    source,
    lifecycle_hooks: fromLifecycleHooks(session.lifecycleHooks),
    auto_pause: session.autoPauseSeconds,
    on_expiry: session.onExpiry,
  };
}
