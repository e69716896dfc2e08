/**
 * Browser sessions: their lifecycle (create, read, close, the idle and lifetime sweep, the end when their VM
 * ends), and the queue each session's page is driven through.
 *
 * A session lives on the node that runs its VM; its page (the driver's connection) is in this process only, so
 * the work on one session runs one at a time, in arrival order (`run`). A session ends when its owner closes it,
 * when it was idle for its idle timeout or lived its lifetime (`sweep`), when its VM ends (engine), or when the
 * server stops or restarts (a page cannot outlive the connection that drives it).
 */
import type * as Wire from '../../contract/browser/index.ts';
import { AppError, InputError, notFound } from '../errors.ts';
import type { Principal } from '../authenticator.ts';
import type { Clock } from '../clock.ts';
import { recordEvent, type EventNotifier } from '../events.ts';
import { newSessionId, newVmId } from '../ids.ts';
import { lockUser } from '../user-lock.ts';
import type { VmEngine } from '../vm-engine.ts';
import type { Database } from '../../store/database.ts';
import {
  activeBrowserSessionsOnNode,
  endBrowserSession,
  findBrowserSession,
  insertBrowserSession,
  insertBrowserUsage,
  listBrowserSessions,
  updateBrowserSession,
  updateBrowserUsage,
  type BrowserSessionRow,
} from '../../store/browser-store.ts';
import type { BrowserPage, Viewport } from './browser-driver.ts';
import type { Ownership } from '../cluster/ownership.ts';
import type { BrowserVms } from './browser-vms.ts';
import type { PageOutcome } from './page-actions.ts';
import { seconds, secondsSince } from './timing.ts';

export interface BrowserSessionOptions {
  /** This node: a session's page lives on the node that opened it. */
  ownership: Ownership;
  idleTimeoutSeconds: number;
  maxSessionSeconds: number;
  /** Viewport when a request names none. */
  defaultViewport: Viewport;
}

type EndReason = 'closed' | 'idle' | 'lifetime' | 'vm_ended' | 'server_shutdown' | 'server_restart';
type EndStatus = 'closed' | 'expired' | 'failed';

/** A session whose page this process drives. */
export interface LiveSession {
  row: BrowserSessionRow;
  page: BrowserPage;
  /** The tail of its work queue. */
  tail: Promise<unknown>;
  lastActivityMs: number;
  pages: number;
  screenshots: number;
  ending: boolean;
}

export class BrowserSessions {
  private readonly live = new Map<string, LiveSession>();
  private readonly byVm = new Map<string, string>();
  private closed = false;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly engine: VmEngine,
    private readonly vms: BrowserVms,
    /** The service's start (leftovers ended, pool filling), awaited before the first session. */
    private readonly ready: () => Promise<void>,
    private readonly options: BrowserSessionOptions,
  ) {
    engine.onVmEnded((vmId, reason) => {
      const sessionId = this.byVm.get(vmId);
      if (sessionId) void this.end(sessionId, reason === 'expired' ? 'expired' : 'failed', reason === 'expired' ? 'lifetime' : 'vm_ended', { vmGone: true });
    });
  }

  async create(principal: Principal, request: Wire.BrowserSessionCreateRequest): Promise<Wire.BrowserSessionResponse> {
    const viewport = {
      width: request.viewport_width ?? this.options.defaultViewport.width,
      height: request.viewport_height ?? this.options.defaultViewport.height,
    };
    const idle = request.idle_timeout_seconds ?? this.options.idleTimeoutSeconds;
    if (idle < 10 || idle > this.options.idleTimeoutSeconds) {
      throw new InputError([
        { loc: ['body', 'idle_timeout_seconds'], msg: `must be from 10 to ${this.options.idleTimeoutSeconds} seconds`, type: 'value_error' },
      ]);
    }
    const now = this.clock.now();
    const row: BrowserSessionRow = {
      id: newSessionId(),
      user_id: principal.userId,
      vm_id: newVmId(),
      node_id: this.options.ownership.nodeId,
      status: 'active',
      viewport_width: viewport.width,
      viewport_height: viewport.height,
      user_agent: request.user_agent ?? null,
      idle_timeout_seconds: idle,
      url: 'about:blank',
      pages_visited: 0,
      screenshots_taken: 0,
      usage_id: null,
      created_at: now.toISOString(),
      last_activity: now.toISOString(),
      lifetime_ends_at: new Date(now.getTime() + this.options.maxSessionSeconds * 1000).toISOString(),
      closed_at: null,
      end_reason: null,
    };
    await this.ready();
    // The row is the quota's count: inserted (active) under the user's lock, before the VM is made.
    await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, principal.userId);
      await this.vms.assertQuota(trx, principal);
      row.usage_id = await insertBrowserUsage(trx, {
        user_id: principal.userId,
        kind: 'session',
        session_id: row.id,
        url: null,
        status: 'active',
        error: null,
        pages: 0,
        screenshots: 0,
        duration_ms: 0,
        screenshot_key: null,
        screenshot_format: null,
        screenshot_bytes: null,
        created_at: row.created_at,
      });
      await insertBrowserSession(trx, row);
    });
    let page: BrowserPage;
    try {
      page = await this.vms.openPage(row.vm_id, this.options.maxSessionSeconds, viewport, row.user_agent);
    } catch (error) {
      await this.recordEnd(row, 'failed', 'vm_ended', 0, 0, row.url, row.last_activity, error instanceof Error ? error.message : String(error));
      throw error;
    }
    const live: LiveSession = { row, page, tail: Promise.resolve(), lastActivityMs: this.clock.now().getTime(), pages: 0, screenshots: 0, ending: false };
    page.onNavigated(() => (live.pages += 1));
    this.live.set(row.id, live);
    this.byVm.set(row.vm_id, row.id);
    if (this.closed) {
      await this.end(row.id, 'closed', 'server_shutdown');
      throw new AppError('SERVICE_UNAVAILABLE', 'the server is shutting down');
    }
    row.last_activity = this.clock.now().toISOString();
    await this.database.db.transaction().execute(async (trx) => {
      await updateBrowserSession(trx, row.id, { last_activity: row.last_activity });
      await recordEvent(trx, this.clock, {
        type: 'browser.session.created',
        userId: principal.userId,
        subjectId: row.id,
        data: { session_id: row.id, vm_id: row.vm_id, viewport_width: viewport.width, viewport_height: viewport.height },
      });
    });
    this.notifier.committed();
    return this.toResponse(row, live);
  }

  async list(principal: Principal): Promise<Wire.BrowserSessionListResponse> {
    const rows = await listBrowserSessions(this.database.db, principal.userId, ['active']);
    return { sessions: rows.map((row) => this.toResponse(row, this.live.get(row.id))) };
  }

  /** Whether this process drives the session's page (cluster routing sends its calls here, not elsewhere). */
  holds(sessionId: string): boolean {
    return this.live.has(sessionId);
  }

  async get(principal: Principal, sessionId: string): Promise<Wire.BrowserSessionResponse> {
    const row = await this.ownedRow(principal, sessionId);
    return this.toResponse(row, this.live.get(row.id));
  }

  async close(principal: Principal, sessionId: string): Promise<Wire.BrowserSessionCloseResponse> {
    const row = await this.ownedRow(principal, sessionId);
    // The published clients read a 404 on close as "already closed".
    if (row.status !== 'active') throw new AppError('NOT_FOUND', `browser session ${sessionId} is already ${row.status}`);
    this.assertLocal(row);
    await this.end(sessionId, 'closed', 'closed');
    return { success: true, session_id: sessionId, message: `browser session ${sessionId} closed; its VM is gone` };
  }

  /** The user's sessions this process drives (their usage so far is in memory, not yet in their rows). */
  liveOf(userId: number): LiveSession[] {
    return [...this.live.values()].filter((session) => session.row.user_id === userId);
  }

  /** What a session has used so far. */
  usageInfo(session: LiveSession): Wire.UsageInfo {
    return {
      pages_visited: session.pages,
      screenshots_taken: session.screenshots,
      session_seconds: seconds(this.clock.now().getTime() - Date.parse(session.row.created_at)),
    };
  }

  /** Runs `run` on the page of the caller's session, in its queue, and answers it as an interaction. */
  async interact(principal: Principal, sessionId: string, run: (page: BrowserPage) => Promise<PageOutcome>): Promise<Wire.BrowserInteractionResponse> {
    const started = performance.now();
    let outcome: PageOutcome | undefined;
    await this.run(principal, sessionId, async (session) => {
      outcome = await run(session.page);
    });
    return { success: true, message: outcome!.message, execution_time: secondsSince(started), session_id: sessionId, data: outcome!.data };
  }

  /** Runs `work` on the caller's live session after the work queued before it; counts as activity. */
  async run(principal: Principal, sessionId: string, work: (session: LiveSession) => Promise<void>): Promise<LiveSession> {
    const session = await this.liveSession(principal, sessionId);
    const turn = session.tail.then(async () => {
      if (session.ending) throw new AppError('NOT_FOUND', `browser session ${sessionId} was closed`);
      session.lastActivityMs = this.clock.now().getTime();
      try {
        await work(session);
      } finally {
        session.lastActivityMs = this.clock.now().getTime();
        session.row.last_activity = new Date(session.lastActivityMs).toISOString();
        session.row.url = session.page.url();
        await updateBrowserSession(this.database.db, sessionId, {
          last_activity: session.row.last_activity,
          url: session.row.url,
          pages_visited: session.pages,
          screenshots_taken: session.screenshots,
        }).catch(() => undefined);
      }
    });
    session.tail = turn.catch(() => undefined);
    await turn;
    return session;
  }

  /**
   * Ends the sessions an earlier process of this node left active: their pages were that process's connections,
   * so their VMs are killed.
   */
  async endLeftovers(): Promise<void> {
    for (const row of await activeBrowserSessionsOnNode(this.database.db, this.options.ownership.nodeId)) {
      if (this.live.has(row.id)) continue;
      await this.engine.kill(row.vm_id).catch(() => undefined);
      await this.recordEnd(row, 'failed', 'server_restart', row.pages_visited, row.screenshots_taken, row.url, row.last_activity);
    }
  }

  /** Ends every session (server shutdown); sessions created after this end at once. */
  async endAll(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.live.keys()].map((id) => this.end(id, 'closed', 'server_shutdown')));
  }

  /** Closes sessions past their idle timeout or lifetime. */
  async sweep(): Promise<void> {
    const now = this.clock.now().getTime();
    for (const [id, session] of this.live) {
      if (session.ending) continue;
      if (now >= Date.parse(session.row.lifetime_ends_at)) void this.end(id, 'expired', 'lifetime');
      else if (now - session.lastActivityMs >= session.row.idle_timeout_seconds * 1000) void this.end(id, 'expired', 'idle');
    }
  }

  private async liveSession(principal: Principal, sessionId: string): Promise<LiveSession> {
    if (typeof sessionId !== 'string' || sessionId === '')
      throw new InputError([{ loc: ['body', 'session_id'], msg: 'a browser session id is required', type: 'missing' }]);
    const live = this.live.get(sessionId);
    if (live && live.row.user_id === principal.userId && !live.ending) return live;
    const row = await this.ownedRow(principal, sessionId);
    if (row.status !== 'active' || live?.ending)
      throw new AppError('NOT_FOUND', `browser session ${sessionId} is ${row.status === 'active' ? 'closing' : row.status}`);
    this.assertLocal(row);
    throw new AppError('NOT_FOUND', `browser session ${sessionId} is not running on this server any more`);
  }

  private async ownedRow(principal: Principal, sessionId: string): Promise<BrowserSessionRow> {
    const row = await findBrowserSession(this.database.db, sessionId);
    if (!row || row.user_id !== principal.userId) throw notFound(`browser session ${sessionId}`);
    return row;
  }

  private assertLocal(row: BrowserSessionRow): void {
    this.options.ownership.assertLocal(row.node_id, `browser session ${row.id} runs`);
  }

  /** Ends a live session: its page's connection, its VM, its record and usage, its event. Idempotent. */
  private async end(sessionId: string, status: EndStatus, reason: EndReason, options: { vmGone?: boolean } = {}): Promise<void> {
    const session = this.live.get(sessionId);
    if (!session || session.ending) return;
    session.ending = true;
    // Work in flight fails fast once the VM is gone; waiting for it would hold the close.
    await Promise.race([session.tail, new Promise((resolve) => setTimeout(resolve, options.vmGone ? 0 : 5000).unref())]);
    this.live.delete(sessionId);
    this.byVm.delete(session.row.vm_id);
    await session.page.close().catch(() => undefined);
    if (!options.vmGone) await this.engine.kill(session.row.vm_id).catch(() => undefined);
    await this.recordEnd(session.row, status, reason, session.pages, session.screenshots, session.page.url(), new Date(session.lastActivityMs).toISOString());
  }

  private async recordEnd(
    row: BrowserSessionRow,
    status: EndStatus,
    reason: EndReason,
    pages: number,
    screenshots: number,
    url: string,
    lastActivity: string,
    error?: string,
  ): Promise<void> {
    const closedAt = this.clock.now().toISOString();
    const durationMs = Math.max(0, Date.parse(closedAt) - Date.parse(row.created_at));
    const ended = await this.database.db.transaction().execute(async (trx) => {
      const changed = await endBrowserSession(trx, row.id, { status, endReason: reason, closedAt, url, pages, screenshots, lastActivity });
      if (!changed) return false;
      if (row.usage_id !== null) {
        await updateBrowserUsage(trx, row.usage_id, {
          status: error ? 'failed' : 'ok',
          error: error?.slice(0, 2000) ?? null,
          url,
          pages,
          screenshots,
          duration_ms: durationMs,
        });
      }
      await recordEvent(trx, this.clock, {
        type: 'browser.session.closed',
        userId: row.user_id,
        subjectId: row.id,
        data: { session_id: row.id, status, reason, pages_visited: pages, screenshots_taken: screenshots, duration_seconds: seconds(durationMs) },
      });
      return true;
    });
    if (ended) this.notifier.committed();
  }

  private toResponse(row: BrowserSessionRow, live: LiveSession | undefined): Wire.BrowserSessionResponse {
    const lastActivityMs = live ? live.lastActivityMs : Date.parse(row.last_activity);
    const expiresAt =
      row.status === 'active'
        ? Math.min(lastActivityMs + row.idle_timeout_seconds * 1000, Date.parse(row.lifetime_ends_at))
        : Date.parse(row.closed_at ?? row.last_activity);
    return {
      session_id: row.id,
      status: row.status as Wire.BrowserSessionStatus,
      viewport_width: row.viewport_width,
      viewport_height: row.viewport_height,
      user_agent: row.user_agent,
      created_at: row.created_at,
      last_activity: new Date(lastActivityMs).toISOString(),
      expires_at: new Date(expiresAt).toISOString(),
      idle_timeout_seconds: row.idle_timeout_seconds,
      url: live ? live.page.url() : row.url,
      pages_visited: live ? live.pages : row.pages_visited,
      screenshots_taken: live ? live.screenshots : row.screenshots_taken,
      closed_at: row.closed_at,
      end_reason: row.end_reason,
    };
  }
}
