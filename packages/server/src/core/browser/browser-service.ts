/**
 * Browser automation: sessions (one VM from the built-in `browser` template each, driven through `BrowserDriver`),
 * their interactions, one-shot renders (a VM for the one page, killed after), usage records and stored screenshots,
 * and the credentials `fill-credential` types into pages.
 *
 * A session lives on the node that runs its VM; its page (the driver's connection) is in this process only, so
 * interactions of one session run one at a time, in arrival order. A session ends when its owner closes it, when
 * it was idle for its idle timeout or lived its lifetime (a sweep every few seconds), when its VM ends (engine), or
 * when the server stops or restarts (a page cannot outlive the connection that drives it).
 */
import { randomBytes } from 'node:crypto';
import { AppError, InputError, notFound } from '../errors.ts';
import type { Principal } from '../authenticator.ts';
import type { Clock } from '../clock.ts';
import { recordEvent, type EventNotifier } from '../events.ts';
import { newSessionId, newVmId } from '../ids.ts';
import type { PlanLimiter } from '../limits.ts';
import { lockUser } from '../user-lock.ts';
import type { TemplateImage, VmEngine } from '../vm-engine.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import type { Database } from '../../store/database.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import {
  activeBrowserSessionsOnNode,
  browserUsageTotals,
  countActiveBrowserSessions,
  deleteBrowserCredential,
  endBrowserSession,
  findBrowserCredential,
  findBrowserCredentialByName,
  findBrowserSession,
  findBrowserUsage,
  insertBrowserCredential,
  insertBrowserSession,
  insertBrowserUsage,
  listBrowserCredentials,
  listBrowserSessions,
  listBrowserUsage,
  updateBrowserCredential,
  updateBrowserSession,
  updateBrowserUsage,
  usageWithScreenshotsBefore,
  type BrowserCredentialRow,
  type BrowserSessionRow,
  type BrowserUsageRow,
} from '../../store/browser-store.ts';
import type * as Api from './browser-api.ts';
import type { BrowserDriver, BrowserPage } from './browser-driver.ts';

export interface BrowserServiceOptions {
  nodeId: string;
  vcpuCount: number;
  memoryMb: number;
  poolSize: number;
  idleTimeoutSeconds: number;
  maxSessionSeconds: number;
  /** Stored screenshots older than this are deleted (0: kept). */
  screenshotRetentionDays: number;
  /** Viewport when a request names none. */
  defaultViewport: { width: number; height: number };
  /** How often idle and lifetime limits are checked, ms. */
  sweepIntervalMs?: number;
}

/** Interaction names, as the API paths have them. */
export const INTERACTIONS = ['navigate', 'click', 'type', 'fill', 'scroll', 'wait', 'hover', 'keypress', 'screenshot', 'extract', 'content', 'fill-credential'] as const;
const RENDER_ACTIONS = ['click', 'fill', 'type', 'scroll', 'wait', 'hover', 'keypress', 'navigate'] as const;
const WAIT_CONDITIONS: Api.WaitRequest['condition'][] = ['selector', 'hidden', 'navigation', 'load', 'domcontentloaded', 'networkidle', 'timeout'];
const WAIT_UNTIL: Api.WaitUntil[] = ['load', 'domcontentloaded', 'networkidle', 'commit'];
const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_VIEWPORT = { width: 3840, height: 2160 };
const SCREENSHOT_PREFIX = 'browser/screenshots';
type EndReason = 'closed' | 'idle' | 'lifetime' | 'vm_ended' | 'server_shutdown' | 'server_restart';
type EndStatus = 'closed' | 'expired' | 'failed';

/** A session whose page this process drives. */
interface LiveSession {
  row: BrowserSessionRow;
  page: BrowserPage;
  /** The tail of its interaction queue. */
  tail: Promise<unknown>;
  lastActivityMs: number;
  pages: number;
  screenshots: number;
  ending: boolean;
}

export class BrowserService implements Api.BrowserApi {
  private readonly live = new Map<string, LiveSession>();
  private readonly byVm = new Map<string, string>();
  /** Renders in progress per user (they count against the plan's browser sessions). */
  private readonly rendering = new Map<number, number>();
  private template: Promise<TemplateImage> | undefined;
  private templateError: Error | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private retentionTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private starting: Promise<void> | undefined;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly engine: VmEngine,
    private readonly driver: BrowserDriver,
    private readonly limiter: PlanLimiter,
    private readonly objects: ObjectStore,
    private readonly box: SecretBox,
    private readonly loadTemplate: () => Promise<TemplateImage>,
    private readonly options: BrowserServiceOptions,
  ) {
    engine.onVmEnded((vmId, reason) => {
      const sessionId = this.byVm.get(vmId);
      if (sessionId) void this.end(sessionId, reason === 'expired' ? 'expired' : 'failed', reason === 'expired' ? 'lifetime' : 'vm_ended', { vmGone: true });
    });
  }

  /** Starts the idle sweep and the screenshot retention (no VM work: the app calls it when it is ready). */
  begin(): void {
    if (this.sweeper) return;
    const interval = this.options.sweepIntervalMs ?? 5000;
    this.sweeper = setInterval(() => void this.sweep(), interval);
    this.sweeper.unref();
    if (this.options.screenshotRetentionDays > 0) {
      this.retentionTimer = setInterval(() => void this.pruneScreenshots().catch(() => undefined), 3_600_000);
      this.retentionTimer.unref();
      void this.pruneScreenshots().catch(() => undefined);
    }
  }

  /**
   * Once, before the first session or render (and by main.ts at start): ends the sessions an earlier process of
   * this node left active (their pages were that process's connections; their VMs are killed), and fills the
   * browser pool when it has a size.
   */
  start(): Promise<void> {
    this.starting ??= this.startOnce();
    this.starting.catch(() => (this.starting = undefined));
    return this.starting;
  }

  private async startOnce(): Promise<void> {
    await this.engine.recovered();
    for (const row of await activeBrowserSessionsOnNode(this.database.db, this.options.nodeId)) {
      if (this.live.has(row.id)) continue;
      await this.engine.kill(row.vm_id).catch(() => undefined);
      await this.recordEnd(row, 'failed', 'server_restart', row.pages_visited, row.screenshots_taken, row.url, row.last_activity);
    }
    if (this.options.poolSize > 0) {
      const template = await this.browserTemplate();
      this.engine.keepWarm({
        template,
        vcpuCount: this.options.vcpuCount,
        memoryMb: this.options.memoryMb,
        size: this.options.poolSize,
        warmUp: (agent) => this.driver.warmUp(agent),
      });
    }
  }

  /** Ends every session (server shutdown) and the driver's listener. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.retentionTimer);
    await Promise.allSettled([...this.live.keys()].map((id) => this.end(id, 'closed', 'server_shutdown')));
    await this.driver.close();
  }

  // Sessions

  async createSession(principal: Principal, request: Api.BrowserSessionCreateRequest): Promise<Api.BrowserSessionResponse> {
    const viewport = this.viewportOf(request.viewport_width, request.viewport_height, ['body']);
    const idle = request.idle_timeout_seconds ?? this.options.idleTimeoutSeconds;
    if (idle < 10 || idle > this.options.idleTimeoutSeconds) {
      throw new InputError([{ loc: ['body', 'idle_timeout_seconds'], msg: `must be from 10 to ${this.options.idleTimeoutSeconds} seconds`, type: 'value_error' }]);
    }
    const now = this.clock.now();
    const row: BrowserSessionRow = {
      id: newSessionId(),
      user_id: principal.userId,
      vm_id: newVmId(),
      node_id: this.options.nodeId,
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
    await this.start();
    // The row is the quota's count: inserted (active) under the user's lock, before the VM is made.
    await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, principal.userId);
      await this.assertBrowserQuota(trx, principal);
      row.usage_id = await insertBrowserUsage(trx, { user_id: principal.userId, kind: 'session', session_id: row.id, url: null, status: 'active', error: null, pages: 0, screenshots: 0, duration_ms: 0, screenshot_key: null, screenshot_format: null, screenshot_bytes: null, created_at: row.created_at });
      await insertBrowserSession(trx, row);
    });
    let page: BrowserPage;
    try {
      const template = await this.browserTemplate();
      page = await this.openPage(template, row.vm_id, this.options.maxSessionSeconds, viewport, row.user_agent);
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

  async listSessions(principal: Principal): Promise<Api.BrowserSessionListResponse> {
    const rows = await listBrowserSessions(this.database.db, principal.userId, ['active']);
    return { sessions: rows.map((row) => this.toResponse(row, this.live.get(row.id))) };
  }

  /** Whether this process drives the session's page (cluster routing sends its calls here, not elsewhere). */
  holds(sessionId: string): boolean {
    return this.live.has(sessionId);
  }

  async getSession(principal: Principal, sessionId: string): Promise<Api.BrowserSessionResponse> {
    const row = await this.ownedRow(principal, sessionId);
    return this.toResponse(row, this.live.get(row.id));
  }

  async closeSession(principal: Principal, sessionId: string): Promise<{ success: true; session_id: string; message: string }> {
    const row = await this.ownedRow(principal, sessionId);
    // The published clients read a 404 on close as "already closed".
    if (row.status !== 'active') throw new AppError('NOT_FOUND', `browser session ${sessionId} is already ${row.status}`);
    this.assertLocal(row);
    await this.end(sessionId, 'closed', 'closed');
    return { success: true, session_id: sessionId, message: `browser session ${sessionId} closed; its VM is gone` };
  }

  async capabilities(principal: Principal): Promise<Api.BrowserCapabilities> {
    return {
      engine: 'chromium',
      version: this.driver.version() ?? 'unknown until the first session',
      interactions: [...INTERACTIONS],
      screenshot_formats: ['png', 'jpeg'],
      wait_conditions: WAIT_CONDITIONS,
      wait_until: WAIT_UNTIL,
      max_viewport: MAX_VIEWPORT,
      default_viewport: this.options.defaultViewport,
      idle_timeout_seconds: this.options.idleTimeoutSeconds,
      max_session_seconds: this.options.maxSessionSeconds,
      max_sessions: this.limiter.limitsOf(principal).maxBrowserSessions,
      warm_pool_size: this.options.poolSize,
    };
  }

  // Interactions

  navigate(principal: Principal, request: Api.NavigateRequest): Promise<Api.BrowserInteractionResponse> {
    const waitUntil = request.wait_until ?? 'load';
    return this.interact(principal, request.session_id, async (page) => {
      const result = await page.navigate(checkUrl(request.url, ['body', 'url']), { timeoutMs: request.wait_timeout ?? DEFAULT_TIMEOUT_MS, waitUntil });
      return { message: `navigated to ${result.url}`, data: { url: result.url, title: result.title, status_code: result.status } };
    });
  }

  click(principal: Principal, request: Api.ClickRequest): Promise<Api.BrowserInteractionResponse> {
    return this.interact(principal, request.session_id, async (page) => {
      await page.click(request.selector, { force: request.force ?? false, timeoutMs: request.timeout ?? DEFAULT_TIMEOUT_MS, button: request.button ?? 'left', clickCount: request.click_count ?? 1 });
      return { message: `clicked ${request.selector}`, data: { selector: request.selector, url: page.url() } };
    });
  }

  type(principal: Principal, request: Api.TypeRequest): Promise<Api.BrowserInteractionResponse> {
    return this.interact(principal, request.session_id, async (page) => {
      await page.type(request.selector, request.text, { delayMs: request.delay ?? 100, timeoutMs: request.timeout ?? DEFAULT_TIMEOUT_MS });
      return { message: `typed ${request.text.length} characters into ${request.selector}`, data: { selector: request.selector, characters: request.text.length } };
    });
  }

  fill(principal: Principal, request: Api.FillRequest): Promise<Api.BrowserInteractionResponse> {
    return this.interact(principal, request.session_id, async (page) => {
      await page.fill(request.selector, request.value, { timeoutMs: request.timeout ?? DEFAULT_TIMEOUT_MS });
      return { message: `filled ${request.selector}`, data: { selector: request.selector } };
    });
  }

  scroll(principal: Principal, request: Api.ScrollRequest): Promise<Api.BrowserInteractionResponse> {
    const target = scrollTarget(request, ['body']);
    return this.interact(principal, request.session_id, async (page) => {
      const position = await page.scroll(target, { timeoutMs: DEFAULT_TIMEOUT_MS });
      return { message: 'selector' in target ? `scrolled ${target.selector} into view` : `scrolled to ${position.x}, ${position.y}`, data: position };
    });
  }

  wait(principal: Principal, request: Api.WaitRequest): Promise<Api.BrowserInteractionResponse> {
    if ((request.condition === 'selector' || request.condition === 'hidden') && !request.selector) {
      throw new InputError([{ loc: ['body', 'selector'], msg: `the condition "${request.condition}" needs a selector`, type: 'missing' }]);
    }
    return this.interact(principal, request.session_id, async (page) => {
      await page.wait(request.condition, { selector: request.selector ?? null, timeoutMs: request.timeout ?? DEFAULT_TIMEOUT_MS });
      return { message: `waited for ${request.condition}${request.selector ? ` ${request.selector}` : ''}`, data: { condition: request.condition, url: page.url() } };
    });
  }

  hover(principal: Principal, request: Api.TargetRequest): Promise<Api.BrowserInteractionResponse> {
    return this.interact(principal, request.session_id, async (page) => {
      await page.hover(request.selector, { timeoutMs: request.timeout ?? DEFAULT_TIMEOUT_MS });
      return { message: `hovered over ${request.selector}`, data: { selector: request.selector } };
    });
  }

  keypress(principal: Principal, request: Api.KeyPressRequest): Promise<Api.BrowserInteractionResponse> {
    return this.interact(principal, request.session_id, async (page) => {
      await page.keypress(request.key, { selector: request.selector ?? null, timeoutMs: request.timeout ?? DEFAULT_TIMEOUT_MS });
      return { message: `pressed ${request.key}`, data: { key: request.key, url: page.url() } };
    });
  }

  async screenshot(principal: Principal, request: Api.ScreenshotRequest): Promise<Api.ScreenshotResponse> {
    const format = request.format ?? 'png';
    const started = performance.now();
    let shot: { bytes: Buffer; width: number; height: number } | undefined;
    const live = await this.queued(principal, request.session_id, async (session) => {
      shot = await session.page.screenshot({ fullPage: request.full_page ?? false, format, clip: request.clip ?? null, quality: request.quality ?? null, timeoutMs: DEFAULT_TIMEOUT_MS });
      session.screenshots += 1;
    });
    return {
      screenshot: shot!.bytes.toString('base64'),
      format,
      width: shot!.width,
      height: shot!.height,
      execution_time: seconds(performance.now() - started),
      session_id: request.session_id,
      usage_info: this.usageInfo(live),
    };
  }

  async extract(principal: Principal, request: Api.ExtractRequest): Promise<Api.ExtractResponse> {
    const started = performance.now();
    let elements: Api.ExtractedElement[] = [];
    await this.queued(principal, request.session_id, async (session) => {
      elements = await session.page.extract({ selector: request.selector ?? null, attributes: request.attributes ?? [], maxElements: request.max_elements ?? 100, timeoutMs: DEFAULT_TIMEOUT_MS });
    });
    return { elements, count: elements.length, execution_time: seconds(performance.now() - started), session_id: request.session_id };
  }

  async content(principal: Principal, request: Api.ContentRequest): Promise<Api.ContentResponse> {
    const started = performance.now();
    let content: Awaited<ReturnType<BrowserPage['content']>> | undefined;
    const live = await this.queued(principal, request.session_id, async (session) => {
      content = await session.page.content({ maxAnchors: request.max_anchors ?? 50, maxInteractive: 200, timeoutMs: DEFAULT_TIMEOUT_MS });
    });
    return {
      readable_content: { content: content!.text, title: content!.title, length: content!.text.length },
      interactive_elements: request.include_interactive === false ? [] : content!.interactive,
      content_anchors: request.include_anchors === false ? [] : content!.anchors,
      execution_time: seconds(performance.now() - started),
      session_id: request.session_id,
      url: live.page.url(),
      usage_info: this.usageInfo(live),
    };
  }

  async fillCredential(principal: Principal, request: Api.FillCredentialRequest): Promise<Api.BrowserInteractionResponse> {
    const credential = await this.ownedCredential(principal, request.credential_id);
    const password = this.box.open(credential.secret_sealed, credentialAad(credential));
    const timeoutMs = request.timeout ?? DEFAULT_TIMEOUT_MS;
    return this.interact(principal, request.session_id, async (page) => {
      const host = hostOf(page.url());
      const hosts = JSON.parse(credential.allowed_hosts) as string[];
      if (!host || !hosts.some((pattern) => hostMatches(pattern, host))) {
        throw new AppError('FORBIDDEN', `credential ${credential.name} may be filled only on ${hosts.join(', ')}; the page is on ${host ?? page.url()}`);
      }
      const usernameSelector = request.username_selector ?? 'input[autocomplete=username], input[type=email], input[name*=user i], input[name*=login i], input[name*=email i], input[type=text]';
      const passwordSelector = request.password_selector ?? 'input[type=password]';
      await page.fill(usernameSelector, credential.username, { timeoutMs });
      await page.fill(passwordSelector, password, { timeoutMs });
      if (request.submit) await page.keypress('Enter', { selector: passwordSelector, timeoutMs });
      await updateBrowserCredential(this.database.db, credential.id, { last_used_at: this.clock.now().toISOString() });
      return { message: `filled credential ${credential.name} on ${host}${request.submit ? ' and submitted' : ''}`, data: { credential_id: credential.id, host, submitted: request.submit ?? false } };
    });
  }

  // One-shot render

  async render(principal: Principal, request: Api.RenderRequest): Promise<Api.RenderResponse> {
    const hasUrl = typeof request.url === 'string' && request.url !== '';
    const hasHtml = typeof request.html === 'string';
    if (hasUrl === hasHtml) throw new InputError([{ loc: ['body'], msg: 'give exactly one of url and html', type: 'value_error' }]);
    const url = hasUrl ? checkUrl(request.url!, ['body', 'url']) : null;
    const viewport = this.viewportOf(request.width, request.height, ['body']);
    const actions = (request.actions ?? []).map((action, index) => parseAction(action, ['body', 'actions', index]));
    const format = request.format ?? 'png';
    const waitTimeoutMs = request.wait_timeout ?? DEFAULT_TIMEOUT_MS;
    await this.start();
    await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, principal.userId);
      await this.assertBrowserQuota(trx, principal);
      // Counted before the transaction ends, so a second render checking the quota sees this one.
      this.rendering.set(principal.userId, (this.rendering.get(principal.userId) ?? 0) + 1);
    });
    const started = performance.now();
    const createdAt = this.clock.now().toISOString();
    let usageId = 0;
    const vmId = newVmId();
    let page: BrowserPage | undefined;
    let pages = 0;
    try {
      usageId = await insertBrowserUsage(this.database.db, { user_id: principal.userId, kind: 'render', session_id: null, url: url ?? 'about:blank (html)', status: 'active', error: null, pages: 0, screenshots: 0, duration_ms: 0, screenshot_key: null, screenshot_format: null, screenshot_bytes: null, created_at: createdAt });
      const template = await this.browserTemplate();
      page = await this.openPage(template, vmId, Math.ceil(waitTimeoutMs / 1000) + 300, viewport, request.user_agent ?? null);
      page.onNavigated(() => (pages += 1));
      const deadline = Date.now() + waitTimeoutMs;
      const left = () => Math.max(1, deadline - Date.now());
      let status: number | null = null;
      if (url) status = (await page.navigate(url, { timeoutMs: left(), waitUntil: request.wait_until ?? 'load' })).status;
      else await page.setContent(request.html!, { timeoutMs: left(), waitUntil: request.wait_until ?? 'load' });
      if (request.wait_for_selector) await page.wait('selector', { selector: request.wait_for_selector, timeoutMs: left() });
      for (const action of actions) await runAction(page, action);
      let shot: { bytes: Buffer; width: number; height: number } | null = null;
      if (request.return_screenshot !== false) {
        shot = await page.screenshot({ fullPage: request.full_page ?? false, format, clip: request.clip ?? null, quality: request.quality ?? null, timeoutMs: DEFAULT_TIMEOUT_MS });
      }
      const html = request.return_html ? await page.html() : null;
      const text = request.return_text ? await page.text() : null;
      const title = await page.title();
      const finalUrl = page.url();
      let key: string | null = null;
      if (shot) {
        key = `${SCREENSHOT_PREFIX}/${principal.userId}/${usageId}.${format === 'png' ? 'png' : 'jpg'}`;
        await this.objects.put(key, shot.bytes, { contentType: format === 'png' ? 'image/png' : 'image/jpeg' });
      }
      const durationMs = Math.round(performance.now() - started);
      await updateBrowserUsage(this.database.db, usageId, {
        status: 'ok',
        url: url ?? finalUrl,
        pages: Math.max(pages, 1),
        screenshots: shot ? 1 : 0,
        duration_ms: durationMs,
        screenshot_key: key,
        screenshot_format: shot ? format : null,
        screenshot_bytes: shot ? shot.bytes.length : null,
      });
      return {
        success: true,
        usage_id: usageId,
        url: finalUrl,
        title,
        status_code: status,
        screenshot: shot ? shot.bytes.toString('base64') : null,
        format: shot ? format : null,
        width: shot?.width ?? viewport.width,
        height: shot?.height ?? viewport.height,
        html,
        text,
        execution_time: seconds(durationMs),
        screenshot_url: shot ? `/v1/browser/screenshot/${usageId}` : null,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (usageId) await updateBrowserUsage(this.database.db, usageId, { status: 'failed', error: message.slice(0, 2000), pages, duration_ms: Math.round(performance.now() - started) }).catch(() => undefined);
      throw error;
    } finally {
      await page?.close().catch(() => undefined);
      await this.engine.kill(vmId).catch(() => undefined);
      this.rendering.set(principal.userId, (this.rendering.get(principal.userId) ?? 1) - 1);
    }
  }

  // Usage and stored screenshots

  async usage(principal: Principal): Promise<Api.BrowserUsageSummary> {
    const since = new Date(this.clock.now().getTime() - 30 * 86_400_000).toISOString();
    const [all, recent, active] = await Promise.all([
      browserUsageTotals(this.database.db, principal.userId, null),
      browserUsageTotals(this.database.db, principal.userId, since),
      countActiveBrowserSessions(this.database.db, principal.userId),
    ]);
    const live = [...this.live.values()].filter((session) => session.row.user_id === principal.userId);
    // Open sessions count what they did so far (their usage rows are written when they end).
    const extra = { pages: sum(live.map((s) => s.pages)), screenshots: sum(live.map((s) => s.screenshots)), ms: sum(live.map((s) => this.clock.now().getTime() - Date.parse(s.row.created_at))) };
    const totals = (t: typeof all) => ({
      renders: t.renders,
      sessions: t.sessions,
      pages: t.pages + extra.pages,
      screenshots: t.screenshots + extra.screenshots,
      total_seconds: seconds(t.durationMs + extra.ms),
    });
    return { user_id: principal.userId, ...totals(all), active_sessions: active, max_sessions: this.limiter.limitsOf(principal).maxBrowserSessions, last_30_days: totals(recent) };
  }

  async usageHistory(principal: Principal, page: { limit: number; offset: number }): Promise<Api.BrowserUsageHistory> {
    const { rows, total } = await listBrowserUsage(this.database.db, principal.userId, page.limit, page.offset);
    return { items: rows.map((row) => this.toUsageRecord(row)), total, limit: page.limit, offset: page.offset };
  }

  async storedScreenshot(principal: Principal, usageId: number): Promise<Api.StoredScreenshot> {
    const row = await findBrowserUsage(this.database.db, usageId);
    if (!row || row.user_id !== principal.userId) throw notFound(`browser usage record ${usageId}`);
    if (!row.screenshot_key || !row.screenshot_format) throw new AppError('NOT_FOUND', `usage record ${usageId} has no stored screenshot (only renders with a screenshot keep one, and only for ${this.options.screenshotRetentionDays} days)`);
    const stored = await this.objects.get(row.screenshot_key);
    if (!stored) throw new AppError('NOT_FOUND', `the screenshot of usage record ${usageId} is no longer kept`);
    const expiresAt = this.options.screenshotRetentionDays > 0 ? new Date(Date.parse(row.created_at) + this.options.screenshotRetentionDays * 86_400_000).toISOString() : null;
    return {
      usage_id: usageId,
      format: row.screenshot_format as Api.ScreenshotFormat,
      content_type: stored.contentType,
      screenshot: stored.body.toString('base64'),
      bytes: stored.body.length,
      created_at: row.created_at,
      expires_at: expiresAt,
    };
  }

  async authTest(principal: Principal) {
    const available = this.templateError === undefined;
    return {
      success: true as const,
      authenticated: true as const,
      user_id: principal.userId,
      username: principal.username,
      plan: principal.plan,
      browser_available: available,
      message: available ? `authenticated as ${principal.username}; the browser service is available` : `authenticated as ${principal.username}; the browser is unavailable: ${this.templateError!.message}`,
    };
  }

  // Credentials

  async createCredential(principal: Principal, request: Api.BrowserCredentialCreateRequest): Promise<Api.BrowserCredentialRecord> {
    const hosts = checkHosts(request.allowed_hosts, ['body', 'allowed_hosts']);
    if (await findBrowserCredentialByName(this.database.db, principal.userId, request.name)) throw new AppError('CONFLICT', `you already have a credential named "${request.name}"`);
    const now = this.clock.now().toISOString();
    const id = `cred_${randomBytes(12).toString('hex')}`;
    const row: BrowserCredentialRow = { id, user_id: principal.userId, name: request.name, username: request.username, secret_sealed: '', allowed_hosts: JSON.stringify(hosts), created_at: now, updated_at: now, last_used_at: null };
    row.secret_sealed = this.box.seal(request.password, credentialAad(row));
    await insertBrowserCredential(this.database.db, row);
    return toCredentialRecord(row);
  }

  async listCredentials(principal: Principal): Promise<{ credentials: Api.BrowserCredentialRecord[] }> {
    return { credentials: (await listBrowserCredentials(this.database.db, principal.userId)).map(toCredentialRecord) };
  }

  async getCredential(principal: Principal, credentialId: string): Promise<Api.BrowserCredentialRecord> {
    return toCredentialRecord(await this.ownedCredential(principal, credentialId));
  }

  async updateCredential(principal: Principal, credentialId: string, request: Api.BrowserCredentialUpdateRequest): Promise<Api.BrowserCredentialRecord> {
    const row = await this.ownedCredential(principal, credentialId);
    const changes: Partial<BrowserCredentialRow> = { updated_at: this.clock.now().toISOString() };
    if (request.username !== undefined) changes.username = request.username;
    if (request.allowed_hosts !== undefined) changes.allowed_hosts = JSON.stringify(checkHosts(request.allowed_hosts, ['body', 'allowed_hosts']));
    if (request.password !== undefined) changes.secret_sealed = this.box.seal(request.password, credentialAad(row));
    await updateBrowserCredential(this.database.db, row.id, changes);
    return toCredentialRecord({ ...row, ...changes });
  }

  async deleteCredential(principal: Principal, credentialId: string): Promise<void> {
    const row = await this.ownedCredential(principal, credentialId);
    await deleteBrowserCredential(this.database.db, row.id);
  }

  /** Idle browser VMs in the warm pool of this node. */
  async pooledVms(): Promise<number> {
    const counts = this.engine.poolCounts(await this.browserTemplate());
    return Object.values(counts).reduce((a, b) => a + b, 0);
  }

  // Internals

  private browserTemplate(): Promise<TemplateImage> {
    if (!this.template) {
      this.template = this.loadTemplate();
      this.template.then(
        () => (this.templateError = undefined),
        (error: Error) => {
          this.templateError = error;
          this.template = undefined; // the next request tries again
        },
      );
    }
    return this.template.catch((error: Error) => {
      throw new AppError('SERVICE_UNAVAILABLE', `the browser template is not available on this server: ${error.message}`);
    });
  }

  /** A VM from the browser template with its page ready; the VM is killed when the page cannot be opened. */
  private async openPage(template: TemplateImage, vmId: string, lifetimeSeconds: number, viewport: { width: number; height: number }, userAgent: string | null): Promise<BrowserPage> {
    const vm = await this.engine.acquire({ vmId, source: { kind: 'template', image: template }, vcpuCount: this.options.vcpuCount, memoryMb: this.options.memoryMb, lifetimeSeconds });
    try {
      const agent = this.engine.agent(vmId);
      if (!agent) throw new AppError('VM_UNAVAILABLE', `browser VM ${vmId} ended before its browser could be reached`);
      return await this.driver.open(agent, { viewport, userAgent, fresh: !vm.pooled });
    } catch (error) {
      await this.engine.kill(vmId).catch(() => undefined);
      if (error instanceof AppError) throw error;
      throw new AppError('VM_UNAVAILABLE', `the browser in VM ${vmId} could not be reached: ${(error as Error).message}`);
    }
  }

  private async assertBrowserQuota(trx: Parameters<typeof countActiveBrowserSessions>[0], principal: Principal): Promise<void> {
    const limit = this.limiter.limitsOf(principal).maxBrowserSessions;
    const open = (await countActiveBrowserSessions(trx, principal.userId)) + (this.rendering.get(principal.userId) ?? 0);
    if (open >= limit) {
      throw new AppError('QUOTA_EXCEEDED', `quota exceeded: your plan (${principal.plan}) allows ${limit} browser sessions and renders at once and you have ${open}; close one first`);
    }
  }

  private async interact(
    principal: Principal,
    sessionId: string,
    run: (page: BrowserPage) => Promise<{ message: string; data: Record<string, unknown> | null }>,
  ): Promise<Api.BrowserInteractionResponse> {
    const started = performance.now();
    let outcome: { message: string; data: Record<string, unknown> | null } | undefined;
    await this.queued(principal, sessionId, async (session) => {
      outcome = await run(session.page);
    });
    return { success: true, message: outcome!.message, execution_time: seconds(performance.now() - started), session_id: sessionId, data: outcome!.data };
  }

  /** Runs `work` on the caller's live session after the interactions queued before it; counts as activity. */
  private async queued(principal: Principal, sessionId: string, work: (session: LiveSession) => Promise<void>): Promise<LiveSession> {
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

  private async liveSession(principal: Principal, sessionId: string): Promise<LiveSession> {
    if (typeof sessionId !== 'string' || sessionId === '') throw new InputError([{ loc: ['body', 'session_id'], msg: 'a browser session id is required', type: 'missing' }]);
    const live = this.live.get(sessionId);
    if (live && live.row.user_id === principal.userId && !live.ending) return live;
    const row = await this.ownedRow(principal, sessionId);
    if (row.status !== 'active' || live?.ending) throw new AppError('NOT_FOUND', `browser session ${sessionId} is ${row.status === 'active' ? 'closing' : row.status}`);
    this.assertLocal(row);
    throw new AppError('NOT_FOUND', `browser session ${sessionId} is not running on this server any more`);
  }

  private async ownedRow(principal: Principal, sessionId: string): Promise<BrowserSessionRow> {
    const row = await findBrowserSession(this.database.db, sessionId);
    if (!row || row.user_id !== principal.userId) throw notFound(`browser session ${sessionId}`);
    return row;
  }

  private assertLocal(row: BrowserSessionRow): void {
    if (row.node_id !== this.options.nodeId) throw new AppError('VM_UNAVAILABLE', `browser session ${row.id} runs on node ${row.node_id}, not on this one (${this.options.nodeId}): send the request to that node`);
  }

  private async ownedCredential(principal: Principal, credentialId: string): Promise<BrowserCredentialRow> {
    const row = await findBrowserCredential(this.database.db, credentialId);
    if (!row || row.user_id !== principal.userId) throw notFound(`browser credential ${credentialId}`);
    return row;
  }

  /** Ends a live session: its page's connection, its VM, its record and usage, its event. Idempotent. */
  private async end(sessionId: string, status: EndStatus, reason: EndReason, options: { vmGone?: boolean } = {}): Promise<void> {
    const session = this.live.get(sessionId);
    if (!session || session.ending) return;
    session.ending = true;
    // Interactions in flight fail fast once the VM is gone; waiting for them would hold the close.
    await Promise.race([session.tail, new Promise((resolve) => setTimeout(resolve, options.vmGone ? 0 : 5000).unref())]);
    this.live.delete(sessionId);
    this.byVm.delete(session.row.vm_id);
    await session.page.close().catch(() => undefined);
    if (!options.vmGone) await this.engine.kill(session.row.vm_id).catch(() => undefined);
    await this.recordEnd(session.row, status, reason, session.pages, session.screenshots, session.page.url(), new Date(session.lastActivityMs).toISOString());
  }

  private async recordEnd(row: BrowserSessionRow, status: EndStatus, reason: EndReason, pages: number, screenshots: number, url: string, lastActivity: string, error?: string): Promise<void> {
    const closedAt = this.clock.now().toISOString();
    const durationMs = Math.max(0, Date.parse(closedAt) - Date.parse(row.created_at));
    const ended = await this.database.db.transaction().execute(async (trx) => {
      const changed = await endBrowserSession(trx, row.id, { status, endReason: reason, closedAt, url, pages, screenshots, lastActivity });
      if (!changed) return false;
      if (row.usage_id !== null) {
        await updateBrowserUsage(trx, row.usage_id, { status: error ? 'failed' : 'ok', error: error?.slice(0, 2000) ?? null, url, pages, screenshots, duration_ms: durationMs });
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

  /** Closes sessions past their idle timeout or lifetime. */
  private async sweep(): Promise<void> {
    const now = this.clock.now().getTime();
    for (const [id, session] of this.live) {
      if (session.ending) continue;
      if (now >= Date.parse(session.row.lifetime_ends_at)) void this.end(id, 'expired', 'lifetime');
      else if (now - session.lastActivityMs >= session.row.idle_timeout_seconds * 1000) void this.end(id, 'expired', 'idle');
    }
  }

  /** Deletes stored screenshots older than the retention and forgets their keys. */
  private async pruneScreenshots(): Promise<void> {
    const before = new Date(this.clock.now().getTime() - this.options.screenshotRetentionDays * 86_400_000).toISOString();
    for (;;) {
      const rows = await usageWithScreenshotsBefore(this.database.db, before, 500);
      if (rows.length === 0) return;
      for (const row of rows) {
        await this.objects.delete(row.screenshot_key);
        await updateBrowserUsage(this.database.db, row.id, { screenshot_key: null });
      }
    }
  }

  private viewportOf(width: number | undefined, height: number | undefined, loc: (string | number)[]): { width: number; height: number } {
    const viewport = { width: width ?? this.options.defaultViewport.width, height: height ?? this.options.defaultViewport.height };
    if (viewport.width < 100 || viewport.width > MAX_VIEWPORT.width || viewport.height < 100 || viewport.height > MAX_VIEWPORT.height) {
      throw new InputError([{ loc, msg: `the viewport must be from 100x100 to ${MAX_VIEWPORT.width}x${MAX_VIEWPORT.height}`, type: 'value_error' }]);
    }
    return viewport;
  }

  private usageInfo(session: LiveSession): Api.UsageInfo {
    return { pages_visited: session.pages, screenshots_taken: session.screenshots, session_seconds: seconds(this.clock.now().getTime() - Date.parse(session.row.created_at)) };
  }

  private toResponse(row: BrowserSessionRow, live: LiveSession | undefined): Api.BrowserSessionResponse {
    const lastActivityMs = live ? live.lastActivityMs : Date.parse(row.last_activity);
    const expiresAt = row.status === 'active' ? Math.min(lastActivityMs + row.idle_timeout_seconds * 1000, Date.parse(row.lifetime_ends_at)) : Date.parse(row.closed_at ?? row.last_activity);
    return {
      session_id: row.id,
      status: row.status as Api.BrowserSessionStatus,
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

  private toUsageRecord(row: BrowserUsageRow): Api.BrowserUsageRecord {
    return {
      usage_id: row.id,
      kind: row.kind as 'render' | 'session',
      session_id: row.session_id,
      url: row.url,
      status: row.status as Api.BrowserUsageRecord['status'],
      error: row.error,
      pages: row.pages,
      screenshots: row.screenshots,
      duration_seconds: seconds(row.duration_ms),
      has_screenshot: row.screenshot_key !== null,
      created_at: row.created_at,
    };
  }
}

/** A render action, checked: `{type, …}` with the fields of the interaction of that name. */
type RenderAction =
  | { type: 'click'; selector: string; timeoutMs: number; force: boolean }
  | { type: 'fill'; selector: string; value: string; timeoutMs: number }
  | { type: 'type'; selector: string; text: string; delayMs: number; timeoutMs: number }
  | { type: 'hover'; selector: string; timeoutMs: number }
  | { type: 'keypress'; key: string; selector: string | null; timeoutMs: number }
  | { type: 'scroll'; target: { selector: string } | { x: number; y: number } }
  | { type: 'wait'; condition: Api.WaitRequest['condition']; selector: string | null; timeoutMs: number }
  | { type: 'navigate'; url: string; timeoutMs: number };

function parseAction(raw: Record<string, unknown>, loc: (string | number)[]): RenderAction {
  const problem = (field: string, msg: string): never => {
    throw new InputError([{ loc: [...loc, field], msg, type: 'value_error' }]);
  };
  const str = (field: string, required = true): string | null => {
    const value = raw[field];
    if (value === undefined || value === null) return required ? problem(field, 'required') : null;
    if (typeof value !== 'string' || value.length > 100_000) return problem(field, 'must be a string of at most 100000 characters');
    return value;
  };
  const num = (field: string, fallback: number): number => {
    const value = raw[field];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 120_000) return problem(field, 'must be a number from 0 to 120000');
    return value;
  };
  const type = raw.type ?? raw.action;
  if (typeof type !== 'string' || !(RENDER_ACTIONS as readonly string[]).includes(type)) return problem('type', `must be one of ${RENDER_ACTIONS.join(', ')}`);
  const timeoutMs = num('timeout', DEFAULT_TIMEOUT_MS);
  switch (type as (typeof RENDER_ACTIONS)[number]) {
    case 'click':
      return { type: 'click', selector: str('selector')!, timeoutMs, force: raw.force === true };
    case 'fill':
      return { type: 'fill', selector: str('selector')!, value: str('value')!, timeoutMs };
    case 'type':
      return { type: 'type', selector: str('selector')!, text: str('text')!, delayMs: num('delay', 0), timeoutMs };
    case 'hover':
      return { type: 'hover', selector: str('selector')!, timeoutMs };
    case 'keypress':
      return { type: 'keypress', key: str('key')!, selector: str('selector', false), timeoutMs };
    case 'scroll':
      return { type: 'scroll', target: scrollTarget(raw as Pick<Api.ScrollRequest, 'selector' | 'x' | 'y'>, loc) };
    case 'wait': {
      const condition = str('condition')! as Api.WaitRequest['condition'];
      if (!WAIT_CONDITIONS.includes(condition)) return problem('condition', `must be one of ${WAIT_CONDITIONS.join(', ')}`);
      return { type: 'wait', condition, selector: str('selector', false), timeoutMs };
    }
    case 'navigate':
      return { type: 'navigate', url: checkUrl(str('url')!, [...loc, 'url']), timeoutMs };
  }
}

async function runAction(page: BrowserPage, action: RenderAction): Promise<void> {
  switch (action.type) {
    case 'click':
      return page.click(action.selector, { force: action.force, timeoutMs: action.timeoutMs, button: 'left', clickCount: 1 });
    case 'fill':
      return page.fill(action.selector, action.value, { timeoutMs: action.timeoutMs });
    case 'type':
      return page.type(action.selector, action.text, { delayMs: action.delayMs, timeoutMs: action.timeoutMs });
    case 'hover':
      return page.hover(action.selector, { timeoutMs: action.timeoutMs });
    case 'keypress':
      return page.keypress(action.key, { selector: action.selector, timeoutMs: action.timeoutMs });
    case 'scroll':
      await page.scroll(action.target, { timeoutMs: DEFAULT_TIMEOUT_MS });
      return;
    case 'wait':
      return page.wait(action.condition, { selector: action.selector, timeoutMs: action.timeoutMs });
    case 'navigate':
      await page.navigate(action.url, { timeoutMs: action.timeoutMs, waitUntil: 'load' });
      return;
  }
}

function scrollTarget(request: Pick<Api.ScrollRequest, 'selector' | 'x' | 'y'>, loc: (string | number)[]): { selector: string } | { x: number; y: number } {
  if (typeof request.selector === 'string' && request.selector !== '') return { selector: request.selector };
  const x = request.x ?? null;
  const y = request.y ?? null;
  if (x === null && y === null) throw new InputError([{ loc, msg: 'give a selector to scroll into view, or x and/or y to scroll to', type: 'missing' }]);
  for (const [field, value] of [['x', x], ['y', y]] as const) {
    if (value !== null && (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 10_000_000)) {
      throw new InputError([{ loc: [...loc, field], msg: 'must be a number of pixels from 0', type: 'value_error' }]);
    }
  }
  return { x: x ?? 0, y: y ?? 0 };
}

/** Pages may be http(s), data: or about:blank; the rest (file:, chrome:, javascript:) is refused. */
function checkUrl(url: string, loc: (string | number)[]): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError([{ loc, msg: 'not an absolute URL', type: 'value_error' }]);
  }
  if (!['http:', 'https:', 'data:', 'about:'].includes(parsed.protocol) || (parsed.protocol === 'about:' && url !== 'about:blank')) {
    throw new InputError([{ loc, msg: `the scheme ${parsed.protocol} is not allowed (http, https, data, about:blank)`, type: 'value_error' }]);
  }
  return url;
}

const HOST_PATTERN = /^(\*\.)?(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\d{1,3}(\.\d{1,3}){3}$/;

function checkHosts(hosts: string[], loc: (string | number)[]): string[] {
  if (!Array.isArray(hosts) || hosts.length === 0 || hosts.length > 50) throw new InputError([{ loc, msg: 'give 1 to 50 host names', type: 'value_error' }]);
  return hosts.map((host, index) => {
    const normalized = String(host).trim().toLowerCase();
    if (!HOST_PATTERN.test(normalized)) throw new InputError([{ loc: [...loc, index], msg: 'not a host name (example.com, *.example.com, or an IPv4 address)', type: 'value_error' }]);
    return normalized;
  });
}

function hostOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1));
  return host === pattern;
}

/** A sealed password is bound to its credential (and user): it cannot be moved to another row. */
function credentialAad(row: Pick<BrowserCredentialRow, 'id' | 'user_id'>): string {
  return `browser-credential:${row.user_id}:${row.id}`;
}

function toCredentialRecord(row: BrowserCredentialRow): Api.BrowserCredentialRecord {
  return {
    credential_id: row.id,
    name: row.name,
    username: row.username,
    allowed_hosts: JSON.parse(row.allowed_hosts) as string[],
    created_at: row.created_at,
    updated_at: row.updated_at,
    last_used_at: row.last_used_at,
  };
}

function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
