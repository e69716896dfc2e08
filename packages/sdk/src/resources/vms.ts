/** VMs: start one (from the built-in image, a template or a snapshot, with volumes), list, get, kill, snapshot, clone, pause, resume, change its lifetime. */
import type { CloneResult, LifecycleHooks, SnapshotRecord, VmPauseResult, VmRecord } from '../api-types.ts';
import { egressPolicyBody, type EgressPolicyOptions } from './egress.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { secondsField, wholeSeconds } from '../durations.ts';

/** A persistent volume for a new VM to mount at `mountPath` (absolute). */
export interface VmVolumeMount {
  volumeId: string;
  mountPath: string;
  /** Writes fail; other VMs may mount it read-only too. Default false: no other VM may mount it meanwhile. */
  readOnly?: boolean;
}

export interface VmCreateOptions extends CallOptions {
  /** A session of yours with no running VM; default: a new session. */
  sessionId?: string;
  /** Start from your snapshot of this name (its vCPUs and memory come with it). */
  snapshot?: string;
  /** Start from your template of this name (`default` is the built-in image). */
  template?: string;
  vcpuCount?: 1 | 2 | 4 | 6 | 8;
  memoryMb?: number;
  /** Milliseconds from its start until it is killed, rounded up to whole seconds (default: its session's). */
  vmLifetimeMs?: number;
  /** @deprecated Use `vmLifetimeMs` (milliseconds, like every duration of this client). */
  vmLifetimeSeconds?: number;
  name?: string;
  metadata?: Record<string, string>;
  /** Answer once the VM runs (default), or at once with the VM `starting`. */
  wait?: boolean;
  /**
   * Persistent volumes to mount (at most 4); they become the session's, mounted again in its next VMs. A snapshot or
   * clone unmounts them for its moment (it holds none of them); a pause keeps them mounted.
   */
  volumes?: VmVolumeMount[];
  /** Your private networks (names or ids) the VM joins at start; they become the session's (its next VMs join too). See `client.networks`. */
  networks?: string[];
  /**
   * Commands the VM runs at points of its life (default: its session's). `preStop` runs before a kill, a pause
   * or the end of its lifetime, bounded by `timeoutMs` (1 s to 120 s, default 30 s); its output is kept as an
   * execution record with `trigger: 'pre_stop'`.
   */
  lifecycleHooks?: LifecycleHooksOptions;
  /** What the VM may reach, enforced on the host (default: its session's); see `client.egress`. */
  egressPolicy?: EgressPolicyOptions;
  /** Your vaults (ids) to attach to its session (added to those it has): each secret is an environment variable holding a placeholder; see `client.vaults`. */
  vaultIds?: string[];
  /** Pause the VM after this many milliseconds of idleness, rounded up to whole seconds (10 s to 30 days); null: never. Default: its session's. */
  autoPauseMs?: number | null;
  /** When its lifetime ends: `kill` it, or `pause` it (its next use resumes it). Default: its session's. */
  onExpiry?: 'kill' | 'pause';
}

/** The request's `auto_pause` and `on_expiry` (auto-pause: the next request that needs a paused VM resumes it). */
export function autoPauseFields(options: { autoPauseMs?: number | null; onExpiry?: 'kill' | 'pause' }): {
  auto_pause?: number | null;
  on_expiry?: 'kill' | 'pause';
} {
  return {
    ...(options.autoPauseMs !== undefined ? { auto_pause: options.autoPauseMs === null ? null : Math.ceil(options.autoPauseMs / 1000) } : {}),
    ...(options.onExpiry !== undefined ? { on_expiry: options.onExpiry } : {}),
  };
}

/** Lifecycle hooks of a new VM or session (the request's `lifecycle_hooks`). */
export interface LifecycleHooksOptions {
  preStop?: {
    command: string;
    /** Milliseconds it may run, rounded up to whole seconds (1 s to 120 s, default 30 s). */
    timeoutMs?: number;
    /** @deprecated Use `timeoutMs`. */
    timeoutSeconds?: number;
  };
}

/** The request's `vm_lifetime_seconds` from `vmLifetimeMs` (or the deprecated `vmLifetimeSeconds`). */
export function lifetimeField(options: { vmLifetimeMs?: number; vmLifetimeSeconds?: number }): { vm_lifetime_seconds?: number } {
  return secondsField('vm_lifetime_seconds', options.vmLifetimeMs, options.vmLifetimeSeconds, ['vmLifetimeMs', 'vmLifetimeSeconds']);
}

/** The request's `lifecycle_hooks` from the options' camelCase form. */
export function lifecycleHooksBody(hooks: LifecycleHooksOptions): LifecycleHooks {
  if (!hooks.preStop) return {};
  const { command } = hooks.preStop;
  const timeoutSeconds = wholeSeconds(hooks.preStop.timeoutMs, hooks.preStop.timeoutSeconds, ['preStop.timeoutMs', 'preStop.timeoutSeconds']);
  // The schema's type lists timeout_seconds as always there (answers have it); a request may leave it out for the default, 30.
  return { pre_stop: { command, ...(timeoutSeconds !== undefined ? { timeout_seconds: timeoutSeconds } : {}) } } as LifecycleHooks;
}

export class Vms {
  constructor(private readonly transport: Transport) {}

  /** Starts a VM (defaults: the session's settings, or the server's for a new session). */
  async create(options: VmCreateOptions = {}): Promise<VmRecord> {
    return this.transport.call('/v1/vms', 'post', {
      ...(options.wait === false ? { query: { wait: false } } : {}),
      json: {
        ...(options.sessionId !== undefined ? { session_id: options.sessionId } : {}),
        ...(options.snapshot !== undefined ? { snapshot: options.snapshot } : {}),
        ...(options.template !== undefined ? { template: options.template } : {}),
        ...(options.vcpuCount !== undefined ? { vcpu_count: options.vcpuCount } : {}),
        ...(options.memoryMb !== undefined ? { memory_mb: options.memoryMb } : {}),
        ...lifetimeField(options),
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.metadata !== undefined ? { metadata: options.metadata } : {}),
        ...(options.volumes
          ? { volumes: options.volumes.map((v) => ({ volume_id: v.volumeId, mount_path: v.mountPath, read_only: v.readOnly ?? false })) }
          : {}),
        ...(options.lifecycleHooks ? { lifecycle_hooks: lifecycleHooksBody(options.lifecycleHooks) } : {}),
        ...(options.egressPolicy ? { egress_policy: egressPolicyBody(options.egressPolicy) } : {}),
        ...(options.vaultIds ? { vault_ids: options.vaultIds } : {}),
        ...(options.networks ? { networks: options.networks } : {}),
        ...autoPauseFields(options),
      },
      signal: options.signal,
    });
  }

  async list(options: { status?: VmRecord['status']; limit?: number } & CallOptions = {}): Promise<VmRecord[]> {
    return this.transport.call('/v1/vms', 'get', { query: { status: options.status, limit: options.limit }, signal: options.signal });
  }

  async get(vmId: string, options: CallOptions = {}): Promise<VmRecord> {
    return this.transport.call('/v1/vms/{vm_id}', 'get', { params: { vm_id: vmId }, signal: options.signal });
  }

  /** Kills the VM (a paused one's saved state goes too). */
  async delete(vmId: string, options: CallOptions = {}) {
    return this.transport.call('/v1/vms/{vm_id}', 'delete', { params: { vm_id: vmId }, signal: options.signal });
  }

  /** Snapshots the running VM (memory, processes, disk); it runs on. Start VMs from it by name. */
  async snapshot(vmId: string, options: { name: string; metadata?: Record<string, string> } & CallOptions): Promise<SnapshotRecord> {
    return this.transport.call('/v1/vms/{vm_id}/snapshot', 'post', {
      params: { vm_id: vmId },
      json: { name: options.name, ...(options.metadata ? { metadata: options.metadata } : {}) },
      signal: options.signal,
    });
  }

  /**
   * Forks the VM into `count` new VMs (1 to 100, default 1; your plan may allow fewer in one request), each in a
   * session of its own, from your snapshot `snapshotName` or, without it, from the VM's current state (a snapshot is
   * taken for it and returned). All or nothing: if one cannot start, none is left. `snapshots.clone` forks a snapshot.
   */
  async clone(vmId: string, options: { snapshotName?: string; count?: number } & CallOptions = {}): Promise<CloneResult> {
    return this.transport.call('/v1/vms/{vm_id}/clone', 'post', {
      params: { vm_id: vmId },
      json: {
        ...(options.snapshotName !== undefined ? { snapshot_name: options.snapshotName } : {}),
        ...(options.count !== undefined ? { count: options.count } : {}),
      },
      signal: options.signal,
    });
  }

  /** Pauses the running VM: its state goes to disk, it holds no memory or CPU, its lifetime stops counting. */
  async pause(vmId: string, options: CallOptions = {}): Promise<VmPauseResult> {
    return this.transport.call('/v1/vms/{vm_id}/pause', 'post', { params: { vm_id: vmId }, signal: options.signal });
  }

  /** Resumes a paused VM: the same machine, as it was (its session's next use resumes it too). */
  async resume(vmId: string, options: CallOptions = {}): Promise<VmRecord> {
    return this.transport.call('/v1/vms/{vm_id}/resume', 'post', { params: { vm_id: vmId }, signal: options.signal });
  }

  /**
   * The VM now ends `timeoutMs` from now (rounded up to whole seconds), sooner or later than it would have (a paused
   * VM: that much lifetime left once it resumes); E2B's `setTimeout`. Answers the VM's record with its new `expires_at`.
   */
  async setTimeout(vmId: string, timeoutMs: number, options: CallOptions = {}): Promise<VmRecord> {
    return this.setLifetime(vmId, wholeSeconds(timeoutMs, undefined, ['timeoutMs', 'lifetimeSeconds'])!, options);
  }

  /** @deprecated Seconds; use `setTimeout(vmId, timeoutMs)`. */
  async setLifetime(vmId: string, lifetimeSeconds: number, options: CallOptions = {}): Promise<VmRecord> {
    return this.transport.call('/v1/vms/{vm_id}/lifetime', 'post', {
      params: { vm_id: vmId },
      json: { lifetime_seconds: lifetimeSeconds },
      signal: options.signal,
    });
  }
}
