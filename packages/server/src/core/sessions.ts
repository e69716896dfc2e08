/**
 * Sessions: a user's handle on "a sandbox over time". A session is bound to at most one VM at a time; the
 * VM lifecycle is in `vms.ts`. Another user's session is reported as not found.
 */
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { newSessionId } from './ids.ts';
import type { Database } from '../store/database.ts';
import type { SessionRow, VmRow } from '../store/schema.ts';
import { sumSessionExecutions } from '../store/executions-store.ts';
import { findSession, insertSession, updateSession } from '../store/sessions-store.ts';
import { findVm, listVms } from '../store/vms-store.ts';

export interface SessionSpec {
  vmLifetimeSeconds: number;
  memoryMb: number;
  vcpuCount: number;
  metadata: Record<string, string>;
  env: Record<string, string>;
  prewarm: boolean;
}

/** The spec's status view of a session and its VM. */
export interface SessionStatus {
  session_id: string;
  exists: boolean;
  vm_assigned: boolean;
  vm_alive: boolean;
  vm_status: string | null;
  vm_id: string | null;
  uptime_seconds: number | null;
  expires_in_seconds: number | null;
  created_at: string;
}

export interface SandboxInfo {
  sandbox_id: string;
  template_id: string;
  name: string;
  metadata: Record<string, string>;
  started_at: string;
  end_at: string | null;
  status: string;
  session_id: string | null;
  vcpu_count: number;
  memory_mb: number;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export class SessionService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
  ) {}

  async create(principal: Principal, spec: SessionSpec): Promise<SessionRow> {
    const now = this.clock.now().toISOString();
    const row = await this.database.db.transaction().execute(async (trx) => {
      const session = await insertSession(trx, {
        id: newSessionId(),
        user_id: principal.userId,
        vm_lifetime_seconds: spec.vmLifetimeSeconds,
        memory_mb: spec.memoryMb,
        vcpu_count: spec.vcpuCount,
        metadata: JSON.stringify(spec.metadata),
        env: JSON.stringify(spec.env),
        prewarm: spec.prewarm ? 1 : 0,
        current_vm_id: null,
        created_at: now,
        last_activity_at: now,
      });
      await recordEvent(trx, this.clock, {
        type: 'session.created',
        userId: principal.userId,
        subjectId: session.id,
        data: {
          session_id: session.id,
          vm_lifetime_seconds: spec.vmLifetimeSeconds,
          memory_mb: spec.memoryMb,
          vcpu_count: spec.vcpuCount,
          metadata: spec.metadata,
          prewarm: spec.prewarm,
        },
      });
      return session;
    });
    this.notifier.committed();
    return row;
  }

  /** A session whatever its owner: only for the spec's /kill, which answers 403 (not 404) to non-owners. */
  async find(sessionId: string): Promise<SessionRow | undefined> {
    return findSession(this.database.db, sessionId);
  }

  /** The caller's session; 404 for unknown ids and for other users' sessions alike. */
  async getOwned(principal: Principal, sessionId: string): Promise<SessionRow> {
    const session = await findSession(this.database.db, sessionId);
    if (!session || session.user_id !== principal.userId) throw notFound(`session ${sessionId}`);
    return session;
  }

  async touch(sessionId: string): Promise<void> {
    await updateSession(this.database.db, sessionId, { last_activity_at: this.clock.now().toISOString() });
  }

  async currentVm(session: SessionRow): Promise<VmRow | undefined> {
    return session.current_vm_id ? findVm(this.database.db, session.current_vm_id) : undefined;
  }

  async status(principal: Principal, sessionId: string): Promise<SessionStatus> {
    const session = await this.getOwned(principal, sessionId);
    return this.statusOf(session, await this.currentVm(session));
  }

  statusOf(session: SessionRow, vm: VmRow | undefined): SessionStatus {
    const now = this.clock.now().getTime();
    const base = { session_id: session.id, exists: true, created_at: session.created_at };
    if (!vm) {
      return { ...base, vm_assigned: false, vm_alive: false, vm_status: null, vm_id: null, uptime_seconds: null, expires_in_seconds: null };
    }
    const alive = vm.status === 'active';
    const expiresIn = vm.status === 'killed' ? 0 : Math.max(0, (Date.parse(vm.expires_at) - now) / 1000);
    return {
      ...base,
      vm_assigned: true,
      vm_alive: alive,
      vm_status: vm.status,
      vm_id: vm.id,
      uptime_seconds: alive && vm.started_at ? round((now - Date.parse(vm.started_at)) / 1000) : null,
      expires_in_seconds: round(expiresIn),
    };
  }

  /** Current session information (the deprecated GET /v1/sessions/session/{id}). Env values are never returned. */
  async info(principal: Principal, sessionId: string): Promise<Record<string, unknown>> {
    const session = await this.getOwned(principal, sessionId);
    const vm = await this.currentVm(session);
    const status = this.statusOf(session, vm);
    return {
      session_id: session.id,
      user_id: session.user_id,
      status: status.vm_alive ? 'active' : 'idle',
      created_at: session.created_at,
      last_activity_at: session.last_activity_at,
      vm_lifetime_seconds: session.vm_lifetime_seconds,
      memory_mb: session.memory_mb,
      vcpu_count: session.vcpu_count,
      metadata: JSON.parse(session.metadata),
      env_keys: Object.keys(JSON.parse(session.env) as Record<string, string>),
      prewarm: session.prewarm === 1,
      vm_id: status.vm_id,
      vm_status: status.vm_status,
      vm_alive: status.vm_alive,
      expires_in_seconds: status.expires_in_seconds,
    };
  }

  /** Aggregate usage: CPU seconds and wall time of the session's executions, plus the live VM's figures. */
  async usage(principal: Principal, sessionId: string, liveUsage: (vm: VmRow) => Promise<Record<string, unknown> | null>): Promise<Record<string, unknown>> {
    const session = await this.getOwned(principal, sessionId);
    const { figures, vm } = await this.usageFigures(session, liveUsage);
    return { ...figures, vm_id: vm?.id ?? null, vm_status: vm?.status ?? null };
  }

  /**
   * Usage of a session named by its id alone, for clients that ask without credentials (the id is 122
   * random bits): the figures only, nothing that names or describes anything else.
   */
  async usageByIdOnly(sessionId: string, liveUsage: (vm: VmRow) => Promise<Record<string, unknown> | null>): Promise<Record<string, unknown>> {
    const session = await this.find(sessionId);
    if (!session) throw notFound(`session ${sessionId}`);
    return (await this.usageFigures(session, liveUsage)).figures;
  }

  private async usageFigures(session: SessionRow, liveUsage: (vm: VmRow) => Promise<Record<string, unknown> | null>) {
    const totals = await sumSessionExecutions(this.database.db, session.id);
    const vm = await this.currentVm(session);
    const live = vm && vm.status === 'active' ? await liveUsage(vm).catch(() => null) : null;
    const figures = {
      session_id: session.id,
      executions: totals.count,
      cpu_seconds: round(totals.cpuSeconds),
      execution_seconds: round(totals.executionSeconds),
      vcpu_count: session.vcpu_count,
      memory_mb: session.memory_mb,
      vm: live,
    };
    return { figures, vm };
  }

  /**
   * The caller's sandboxes (one per VM), newest first, keeping those whose session metadata contains every
   * key/value of `metadata`. Scans in pages so a filter that matches few VMs still fills `limit`.
   */
  async listSandboxes(principal: Principal, options: { metadata: Record<string, string> | null; limit: number }): Promise<SandboxInfo[]> {
    const result: SandboxInfo[] = [];
    const sessions = new Map<string, SessionRow | undefined>();
    let before: string | undefined;
    const PAGE = 200;
    for (;;) {
      const page = await listVms(this.database.db, principal.userId, PAGE, before ? { beforeCreatedAt: before } : {});
      for (const vm of page) {
        if (vm.session_id && !sessions.has(vm.session_id)) sessions.set(vm.session_id, await findSession(this.database.db, vm.session_id));
        const session = vm.session_id ? sessions.get(vm.session_id) : undefined;
        const metadata = session ? (JSON.parse(session.metadata) as Record<string, string>) : {};
        if (options.metadata && !Object.entries(options.metadata).every(([k, v]) => metadata[k] === v)) continue;
        result.push({
          sandbox_id: vm.id,
          template_id: vm.template_id,
          name: metadata.name ?? `sandbox-${vm.template_id}`,
          metadata,
          started_at: vm.started_at ?? vm.created_at,
          end_at: vm.status === 'killed' ? vm.ended_at : vm.expires_at,
          status: vm.status,
          session_id: vm.session_id,
          vcpu_count: vm.vcpu_count,
          memory_mb: vm.memory_mb,
        });
        if (result.length >= options.limit) return result;
      }
      if (page.length < PAGE) return result;
      before = page[page.length - 1]!.created_at;
    }
  }
}
