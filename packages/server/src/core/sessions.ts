/**
 * Sessions: a user's handle on "a sandbox over time". A session is bound to at most one VM at a time; the
 * VM lifecycle is in `vms/`. Another user's session is reported as not found.
 */
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { decodeTimeCursor, encodeTimeCursor } from './cursor.ts';
import { notFound } from './errors.ts';
import { recordEvent, type EventNotifier } from './events.ts';
import { newSessionId } from './ids.ts';
import { DEFAULT_TEMPLATE_ID, type Session, type SessionSpec, type Vm, type VmStatus } from '../model.ts';
import type { Database } from '../store/database.ts';
import { sumSessionExecutions } from '../store/executions-store.ts';
import { findSession, findSessionWithVm, insertSession, listSessionsWithVm, updateSession } from '../store/sessions-store.ts';
import { findVm, listVms } from '../store/vms-store.ts';

export type { SessionSpec };

/**
 * How stale a session's `lastActivityAt` may be before an execute writes it again: a minute's precision is enough
 * for what it tells (when the session was last used), and a warm execute saves a write (as API keys' last use).
 */
const ACTIVITY_PRECISION_MS = 60_000;

/** Settings of a new session that the request may leave out. */
export interface SessionDefaults {
  vmLifetimeSeconds: number;
  memoryMb: number;
  vcpuCount: number;
}

/** The spec's status view of a session and its current VM. */
export interface SessionStatus {
  session: Session;
  /** The session's current VM (alive or ended), or null when it never had one. */
  vm: Vm | null;
  alive: boolean;
  /** Seconds since the live VM started; null when none is alive. */
  uptimeSeconds: number | null;
  /** 0 for an ended VM; null without a VM. */
  expiresInSeconds: number | null;
}

/** A session's usage: its executions' totals and its current VM, with the live VM's own figures when asked. */
export interface SessionUsage<Live> {
  session: Session;
  executions: number;
  cpuSeconds: number;
  executionSeconds: number;
  vm: Vm | null;
  live: Live | null;
}

/** One VM of the caller as a "sandbox", with its session's metadata. */
export interface Sandbox {
  vm: Vm;
  metadata: Record<string, string>;
}

const round = (n: number) => Math.round(n * 1000) / 1000;

export class SessionService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly defaults: SessionDefaults,
  ) {}

  /** What a session asking for `request` gets: what it leaves out comes from the configured defaults. */
  specFor(request: Partial<SessionSpec> = {}): SessionSpec {
    return {
      vmLifetimeSeconds: request.vmLifetimeSeconds ?? this.defaults.vmLifetimeSeconds,
      memoryMb: request.memoryMb ?? this.defaults.memoryMb,
      vcpuCount: request.vcpuCount ?? this.defaults.vcpuCount,
      metadata: request.metadata ?? {},
      env: request.env ?? {},
      prewarm: request.prewarm ?? false,
      source: request.source ?? { kind: 'template', id: DEFAULT_TEMPLATE_ID },
      screen: request.screen ?? null,
      lifecycleHooks: request.lifecycleHooks ?? null,
      clientData: request.clientData ?? null,
      autoPauseSeconds: request.autoPauseSeconds ?? null,
      onExpiry: request.onExpiry ?? 'kill',
    };
  }

  /** Creates a session; what `request` leaves out comes from the configured defaults. */
  async create(principal: Principal, request: Partial<SessionSpec> = {}): Promise<Session> {
    const spec = this.specFor(request);
    const now = this.clock.now().toISOString();
    const created = await this.database.db.transaction().execute(async (trx) => {
      const session = await insertSession(trx, {
        ...spec,
        id: newSessionId(),
        userId: principal.userId,
        currentVmId: null,
        createdAt: now,
        lastActivityAt: now,
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
    return created;
  }

  /** A session whatever its owner: only for the spec's /kill, which answers 403 (not 404) to non-owners. */
  async find(sessionId: string): Promise<Session | undefined> {
    return findSession(this.database.db, sessionId);
  }

  /** The caller's session; 404 for unknown ids and for other users' sessions alike. */
  async getOwned(principal: Principal, sessionId: string): Promise<Session> {
    const session = await findSession(this.database.db, sessionId);
    if (!session || session.userId !== principal.userId) throw notFound(`session ${sessionId}`);
    return session;
  }

  /**
   * The caller's session with its current VM, in one read (404 for anyone else's): what an execute starts from
   * (the VM service resolves the VM's state from it without reading again).
   */
  async getOwnedWithVm(principal: Principal, sessionId: string): Promise<{ session: Session; vm: Vm | undefined }> {
    const found = await findSessionWithVm(this.database.db, sessionId);
    if (!found || found.session.userId !== principal.userId) throw notFound(`session ${sessionId}`);
    return found;
  }

  /** Records that the session was used now, unless its record says so already (within `ACTIVITY_PRECISION_MS`). */
  async noteActivity(session: Session): Promise<void> {
    if (this.clock.now().getTime() - Date.parse(session.lastActivityAt) < ACTIVITY_PRECISION_MS) return;
    await this.touch(session.id);
  }

  async touch(sessionId: string): Promise<void> {
    await updateSession(this.database.db, sessionId, { lastActivityAt: this.clock.now().toISOString() });
  }

  async currentVm(session: Session): Promise<Vm | undefined> {
    return session.currentVmId ? findVm(this.database.db, session.currentVmId) : undefined;
  }

  async status(principal: Principal, sessionId: string): Promise<SessionStatus> {
    const session = await this.getOwned(principal, sessionId);
    return this.statusOf(session, await this.currentVm(session));
  }

  statusOf(session: Session, vm: Vm | undefined): SessionStatus {
    if (!vm) return { session, vm: null, alive: false, uptimeSeconds: null, expiresInSeconds: null };
    const now = this.clock.now().getTime();
    const alive = vm.status === 'active';
    // A paused VM's lifetime does not count down: what is left is what it had when it was paused.
    const expiresInSeconds =
      vm.status === 'killed' ? 0 : vm.status === 'paused' ? (vm.remainingSeconds ?? 0) : round(Math.max(0, (Date.parse(vm.expiresAt) - now) / 1000));
    return { session, vm, alive, uptimeSeconds: alive && vm.startedAt ? round((now - Date.parse(vm.startedAt)) / 1000) : null, expiresInSeconds };
  }

  /**
   * Aggregate usage: CPU seconds and wall time of the session's executions, the current VM, and `liveUsage`
   * of that VM while it is active (null when it fails: the totals still answer).
   */
  async usage<Live>(principal: Principal, sessionId: string, liveUsage: (vm: Vm) => Promise<Live | null>): Promise<SessionUsage<Live>> {
    return this.usageOf(await this.getOwned(principal, sessionId), liveUsage);
  }

  /**
   * Usage of a session named by its id alone, for clients that ask without credentials (the id is 122
   * random bits). The caller answers the figures only, nothing that names or describes anything else.
   */
  async usageByIdOnly<Live>(sessionId: string, liveUsage: (vm: Vm) => Promise<Live | null>): Promise<SessionUsage<Live>> {
    const session = await this.find(sessionId);
    if (!session) throw notFound(`session ${sessionId}`);
    return this.usageOf(session, liveUsage);
  }

  private async usageOf<Live>(session: Session, liveUsage: (vm: Vm) => Promise<Live | null>): Promise<SessionUsage<Live>> {
    const totals = await sumSessionExecutions(this.database.db, session.id);
    const vm = (await this.currentVm(session)) ?? null;
    const live = vm && vm.status === 'active' ? await liveUsage(vm).catch(() => null) : null;
    return { session, executions: totals.count, cpuSeconds: round(totals.cpuSeconds), executionSeconds: round(totals.executionSeconds), vm, live };
  }

  /**
   * A page of the caller's sessions whose current VM is in one of `vmStatuses`, with that VM, newest first; with
   * `metadata`, only sessions whose metadata holds every one of its key/value pairs. `cursor` is the previous page's
   * `nextCursor` (null: this was the last page). Scans in pages, so a filter that matches few sessions still fills
   * `limit`.
   */
  async listWithVm(
    principal: Principal,
    options: { vmStatuses: readonly VmStatus[]; metadata?: Record<string, string>; cursor?: string; limit: number },
  ): Promise<{ items: { session: Session; vm: Vm }[]; nextCursor: string | null }> {
    const wanted = Object.entries(options.metadata ?? {});
    const items: { session: Session; vm: Vm }[] = [];
    let after = options.cursor ? decodeTimeCursor(options.cursor) : undefined;
    // One more than the page, so the answer knows whether another page follows.
    const scan = Math.max(options.limit + 1, 100);
    for (;;) {
      const rows = await listSessionsWithVm(this.database.db, principal.userId, { vmStatuses: options.vmStatuses, limit: scan, ...(after ? { after } : {}) });
      for (const row of rows) {
        if (!wanted.every(([key, value]) => row.session.metadata[key] === value)) continue;
        if (items.length === options.limit) {
          const last = items[items.length - 1]!.session;
          return { items, nextCursor: encodeTimeCursor({ createdAt: last.createdAt, id: last.id }) };
        }
        items.push(row);
      }
      if (rows.length < scan) return { items, nextCursor: null };
      const last = rows[rows.length - 1]!.session;
      after = { createdAt: last.createdAt, id: last.id };
    }
  }

  /**
   * The caller's sandboxes (one per VM), newest first, keeping those whose session metadata contains every
   * key/value of `metadata`. Scans in pages so a filter that matches few VMs still fills `limit`.
   */
  async listSandboxes(principal: Principal, options: { metadata: Record<string, string> | null; limit: number }): Promise<Sandbox[]> {
    const result: Sandbox[] = [];
    const sessions = new Map<string, Session | undefined>();
    let before: string | undefined;
    const PAGE = 200;
    for (;;) {
      const page = await listVms(this.database.db, principal.userId, PAGE, before ? { beforeCreatedAt: before } : {});
      for (const vm of page) {
        if (vm.sessionId && !sessions.has(vm.sessionId)) sessions.set(vm.sessionId, await findSession(this.database.db, vm.sessionId));
        const metadata = (vm.sessionId ? sessions.get(vm.sessionId)?.metadata : undefined) ?? {};
        if (options.metadata && !Object.entries(options.metadata).every(([k, v]) => metadata[k] === v)) continue;
        result.push({ vm, metadata });
        if (result.length >= options.limit) return result;
      }
      if (page.length < PAGE) return result;
      before = page[page.length - 1]!.createdAt;
    }
  }
}
