/** Sessions: create one (a Session object), or act on one by id. */
import type { AppUrl, KillResult, SessionDetails, SessionStatus, SessionUsage } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import type { SessionContext } from '../session.ts';
import { Session } from '../session.ts';
import { egressPolicyBody, type EgressPolicyOptions } from './egress.ts';
import { autoPauseFields, lifecycleHooksBody, lifetimeField, type LifecycleHooksOptions } from './vms.ts';

export interface SessionCreateOptions extends CallOptions {
  /** vCPUs: 1, 2 (default), 4, 6 or 8. */
  vcpuCount?: 1 | 2 | 4 | 6 | 8;
  /** Guest memory, 128 to 8192 MiB (default: the server's, 512). */
  memoryMb?: number;
  /** Milliseconds from a VM's start until it is killed, rounded up to whole seconds, 20 s to 30 days (default 300 s). */
  vmLifetimeMs?: number;
  /** @deprecated Use `vmLifetimeMs` (milliseconds, like every duration of this client). */
  vmLifetimeSeconds?: number;
  /** Your key/value pairs; `client.sandboxes.list({ metadata })` filters on them. */
  metadata?: Record<string, string>;
  /** Environment of every execution of the session. */
  env?: Record<string, string>;
  /** Start the VM now, in the background, instead of on the first execute. */
  prewarm?: boolean;
  /** Start its VMs from your snapshot of this name (its vCPUs and memory come with it). */
  snapshot?: string;
  /** Start its VMs from your template of this name (`default` is the built-in image). */
  template?: string;
  /** Hooks every VM of the session inherits, e.g. `{ preStop: { command: 'sync', timeoutMs: 10_000 } }` (see `VmCreateOptions.lifecycleHooks`). */
  lifecycleHooks?: LifecycleHooksOptions;
  /** What the session's VMs may reach, enforced on the host (default: the server's); see `client.egress`. */
  egressPolicy?: EgressPolicyOptions;
  /** Your vaults (ids) whose secrets its VMs use without holding them: each is an environment variable holding a placeholder; see `client.vaults`. */
  vaultIds?: string[];
  /** Your private networks (names or ids) each VM of the session joins when it starts; see `client.networks`. */
  networks?: string[];
  /**
   * Pause its VMs after this many milliseconds of idleness (no execution, terminal, preview, file or process call),
   * rounded up to whole seconds, 10 s to 30 days; null or absent: never. The next request that needs a paused VM
   * resumes it (an execute's result then has `resumed: { ms }`).
   */
  autoPauseMs?: number | null;
  /** When a VM's lifetime ends: `kill` it (default), or `pause` it (its next use resumes it). */
  onExpiry?: 'kill' | 'pause';
}

export class Sessions {
  constructor(
    private readonly transport: Transport,
    private readonly context: SessionContext,
  ) {}

  async create(options: SessionCreateOptions = {}): Promise<Session> {
    const info = await this.transport.call('/v1/sessions/session', 'post', {
      json: {
        ...(options.vcpuCount !== undefined ? { vcpu_count: options.vcpuCount } : {}),
        ...(options.memoryMb !== undefined ? { memory_mb: options.memoryMb } : {}),
        ...lifetimeField(options),
        ...(options.metadata ? { metadata: options.metadata } : {}),
        ...(options.env ? { env: options.env } : {}),
        ...(options.prewarm !== undefined ? { prewarm: options.prewarm } : {}),
        ...(options.snapshot !== undefined ? { snapshot: options.snapshot } : {}),
        ...(options.template !== undefined ? { template: options.template } : {}),
        ...(options.lifecycleHooks ? { lifecycle_hooks: lifecycleHooksBody(options.lifecycleHooks) } : {}),
        ...(options.egressPolicy ? { egress_policy: egressPolicyBody(options.egressPolicy) } : {}),
        ...(options.vaultIds ? { vault_ids: options.vaultIds } : {}),
        ...(options.networks ? { networks: options.networks } : {}),
        ...autoPauseFields(options),
      },
      signal: options.signal,
    });
    return new Session(this.context, info.session_id, info);
  }

  /** A Session object for an existing session id (no request is made). */
  connect(sessionId: string): Session {
    return new Session(this.context, sessionId);
  }

  async status(sessionId: string, options: CallOptions = {}): Promise<SessionStatus> {
    return this.transport.call('/v1/sessions/status/{session_id}', 'get', { params: { session_id: sessionId }, kind: 'session', signal: options.signal });
  }

  /** Settings, metadata, env names and the current VM. */
  async info(sessionId: string, options: CallOptions = {}): Promise<SessionDetails> {
    return this.transport.call('/v1/sessions/session/{session_id}', 'get', { params: { session_id: sessionId }, kind: 'session', signal: options.signal });
  }

  async usage(sessionId: string, options: CallOptions = {}): Promise<SessionUsage> {
    return this.transport.call('/v1/sessions/usage/{session_id}', 'get', { params: { session_id: sessionId }, kind: 'session', signal: options.signal });
  }

  /** Kills the session's VM: 404 (SessionError) when there is none, 403 (AuthenticationError) for someone else's session. */
  async kill(sessionId: string, options: CallOptions = {}): Promise<KillResult> {
    return this.transport.call('/kill', 'post', { json: { session_id: sessionId }, kind: 'kill', signal: options.signal });
  }

  /** Public URL of a port inside the VM. */
  async appUrl(sessionId: string, port = 80, options: CallOptions = {}): Promise<AppUrl> {
    return this.transport.call('/v1/sessions/app-url/{session_id}', 'get', {
      params: { session_id: sessionId },
      query: { port },
      kind: 'session',
      signal: options.signal,
    });
  }
}
