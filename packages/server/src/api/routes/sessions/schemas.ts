/** Schemas of sessions, VMs and sandboxes (the spec's fields, plus a few documented extras). */
import { Type, type Static } from 'typebox';
import type { SessionRow, VmRow } from '../../../store/schema.ts';

export const VCPU_COUNTS = [1, 2, 4, 6, 8] as const;

/** An integer from a fixed set; one clear 422 (`enum`) instead of one error per allowed value. */
export const VcpuCount = Type.Unsafe<1 | 2 | 4 | 6 | 8>({
  type: 'integer',
  enum: [...VCPU_COUNTS],
  description: 'vCPUs: 1, 2, 4, 6 or 8 (selects the snapshot variant snap1…snap8)',
});
export const LifetimeSeconds = Type.Integer({ minimum: 20, maximum: 2_592_000, description: 'Seconds from spawn until the VM is killed' });
export const MemoryMb = Type.Integer({ minimum: 128, maximum: 8192, description: 'Guest memory in MiB; the guest sees exactly this much' });

const StringMap = (description: string, keyPattern: string) =>
  Type.Record(Type.String({ pattern: keyPattern }), Type.String({ maxLength: 4096 }), { maxProperties: 64, description });

export const SessionCreateRequest = Type.Object(
  {
    api_key: Type.Optional(Type.String({ description: 'The API key, for clients that send it in the body' })),
    vm_lifetime_seconds: Type.Optional({ ...LifetimeSeconds, description: 'Seconds from spawn until the VM is killed; 20 to 2592000, default 300' }),
    memory_mb: Type.Optional({ ...MemoryMb, description: 'Guest memory in MiB, 128 to 8192; default SANDBOXD_DEFAULT_MEMORY_MB (512)' }),
    vcpu_count: Type.Optional({ ...VcpuCount, description: 'vCPUs: 1, 2, 4, 6 or 8, default 2 (selects the snapshot variant snap1…snap8)' }),
    metadata: Type.Optional(StringMap('User-defined key/value pairs, for filtering sandboxes', '^.{1,128}$')),
    env: Type.Optional(StringMap('Environment of every execution of the session', '^[A-Za-z_][A-Za-z0-9_]{0,127}$')),
    prewarm: Type.Optional(Type.Boolean({ description: 'Acquire a standard VM at once, in the background (default false)' })),
  },
  { $id: 'SessionCreateRequest', title: 'SessionCreateRequest' },
);
export type SessionCreateBody = Static<typeof SessionCreateRequest>;

export const SessionCreateResponse = Type.Object(
  {
    session_id: Type.String({ format: 'uuid' }),
    status: Type.String({ description: '"created" (no VM yet), "starting" (prewarm under way) or "active"' }),
    created_at: Type.String({ format: 'date-time' }),
    vm_id: Type.Union([Type.String(), Type.Null()]),
    vm_lifetime_seconds: Type.Integer(),
    memory_mb: Type.Integer(),
    vcpu_count: Type.Integer(),
    metadata: Type.Record(Type.String(), Type.String()),
    prewarm: Type.Boolean(),
  },
  { $id: 'SessionCreateResponse', title: 'SessionCreateResponse' },
);

export const SessionStatusResponse = Type.Object(
  {
    session_id: Type.String(),
    exists: Type.Boolean(),
    vm_assigned: Type.Boolean(),
    vm_alive: Type.Boolean(),
    vm_status: Type.Union([Type.String(), Type.Null()]),
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
    status: Type.String(),
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
    status: Type.String({ description: '"starting", "active" or "killed"' }),
    end_reason: Type.Union([Type.String({ description: 'killed, expired, crashed, failed or server_restart' }), Type.Null()]),
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
    expires_in_seconds: Type.Number(),
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

export const SESSION_SCHEMAS = [SessionCreateRequest, SessionCreateResponse, SessionStatusResponse, SandboxInfoSchema, VmRecord, SessionUsage];

export function toVmRecord(vm: VmRow, now: Date): Static<typeof VmRecord> {
  return {
    vm_id: vm.id,
    session_id: vm.session_id,
    status: vm.status,
    end_reason: vm.end_reason,
    vcpu_count: vm.vcpu_count,
    memory_mb: vm.memory_mb,
    vm_lifetime_seconds: vm.lifetime_seconds,
    template_id: vm.template_id,
    node_id: vm.node_id,
    vm_ip: vm.ip,
    created_at: vm.created_at,
    started_at: vm.started_at,
    expires_at: vm.expires_at,
    ended_at: vm.ended_at,
    expires_in_seconds: vm.status === 'killed' ? 0 : Math.max(0, Math.round((Date.parse(vm.expires_at) - now.getTime()) / 10) / 100),
  };
}

export function toSessionCreateResponse(session: SessionRow, vm: { id: string; status: string } | null, starting: boolean) {
  return {
    session_id: session.id,
    status: vm?.status === 'active' ? 'active' : starting ? 'starting' : 'created',
    created_at: session.created_at,
    vm_id: vm?.id ?? null,
    vm_lifetime_seconds: session.vm_lifetime_seconds,
    memory_mb: session.memory_mb,
    vcpu_count: session.vcpu_count,
    metadata: JSON.parse(session.metadata) as Record<string, string>,
    prewarm: session.prewarm === 1,
  };
}
