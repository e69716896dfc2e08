/**
 * A stand-in for the browser service (`BrowserApi`) with no browser behind it, for tests of what surrounds the
 * service: the routes (bodies in, defaults applied, answers shaped and checked against the document, errors
 * mapped), the client library and the command-line tool. It keeps sessions, renders and credentials in memory,
 * answers only their owner (404 otherwise, as the service does), records every call, and fails on cue:
 *
 * - selector `#missing`: 404 ELEMENT_NOT_FOUND with `selector`; selector `#slow`: 408 BROWSER_TIMEOUT;
 * - a URL with `unreachable` in it: 400 NAVIGATION_FAILED; with `slow`: 408 BROWSER_TIMEOUT;
 * - more than `maxSessions` open sessions of a user: 429 QUOTA_EXCEEDED.
 *
 * Its screenshots are fixed images (a 1×1 PNG, a 1×1 JPEG). It proves nothing about a real browser.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../src/core/authenticator.ts';
import type {
  BrowserApi,
  BrowserCredentialRecord,
  BrowserInteractionResponse,
  BrowserSessionResponse,
  BrowserUsageRecord,
  ScreenshotFormat,
  UsageInfo,
} from '../../src/core/browser/browser-api.ts';
import { AppError, notFound } from '../../src/core/errors.ts';

export const FAKE_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
export const FAKE_JPEG_BASE64 = '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=';

export interface FakeBrowserCall {
  method: keyof BrowserApi;
  userId: number;
  /** The request (or id) the route passed on, as it arrived. */
  request: unknown;
}

export interface FakeBrowser extends BrowserApi {
  readonly calls: FakeBrowserCall[];
}

interface StoredRender {
  userId: number;
  record: BrowserUsageRecord;
  format: ScreenshotFormat;
}

const image = (format: ScreenshotFormat | undefined) => (format === 'jpeg' ? FAKE_JPEG_BASE64 : FAKE_PNG_BASE64);

export function fakeBrowser(options: { maxSessions?: number } = {}): FakeBrowser {
  const maxSessions = options.maxSessions ?? 2;
  const calls: FakeBrowserCall[] = [];
  const sessions = new Map<string, { userId: number; record: BrowserSessionResponse }>();
  const renders = new Map<number, StoredRender>();
  const credentials = new Map<string, { userId: number; record: BrowserCredentialRecord; password: string }>();
  let nextUsageId = 1;
  let nextCredential = 1;
  const now = () => new Date().toISOString();
  const record = (method: keyof BrowserApi, principal: Principal, request: unknown) => calls.push({ method, userId: principal.userId, request });

  const open = (principal: Principal, sessionId: string) => {
    const session = sessions.get(sessionId);
    if (!session || session.userId !== principal.userId || session.record.status !== 'active') throw notFound(`browser session ${sessionId}`);
    session.record.last_activity = now();
    return session.record;
  };
  const usageOf = (session: BrowserSessionResponse): UsageInfo => ({
    pages_visited: session.pages_visited,
    screenshots_taken: session.screenshots_taken,
    session_seconds: (Date.now() - Date.parse(session.created_at)) / 1000,
  });
  /** Fails on cue for a selector, as a real page would for one that matches nothing or never becomes ready. */
  const element = (selector: string | null | undefined) => {
    if (selector === '#missing') throw new AppError('ELEMENT_NOT_FOUND', `no element matches ${selector}`, {}, { selector });
    if (selector === '#slow') throw new AppError('BROWSER_TIMEOUT', `${selector} was not ready within the timeout`);
  };
  const done = (session: BrowserSessionResponse, message: string, data: Record<string, unknown> | null = null): BrowserInteractionResponse => ({
    success: true,
    message,
    execution_time: 0.01,
    session_id: session.session_id,
    data,
  });
  const credentialOf = (principal: Principal, credentialId: string) => {
    const credential = credentials.get(credentialId);
    if (!credential || credential.userId !== principal.userId) throw notFound(`credential ${credentialId}`);
    return credential;
  };
  const load = (url: string) => {
    if (url.includes('unreachable')) throw new AppError('NAVIGATION_FAILED', `could not load ${url}: net::ERR_NAME_NOT_RESOLVED`);
    if (url.includes('slow')) throw new AppError('BROWSER_TIMEOUT', `${url} did not load within the timeout`);
  };

  return {
    calls,

    async createSession(principal, request) {
      record('createSession', principal, request);
      const mine = [...sessions.values()].filter((s) => s.userId === principal.userId && s.record.status === 'active');
      if (mine.length >= maxSessions) throw new AppError('QUOTA_EXCEEDED', `your plan allows ${maxSessions} open browser sessions: close one first`);
      const at = now();
      const session: BrowserSessionResponse = {
        session_id: randomUUID(),
        status: 'active',
        viewport_width: request.viewport_width ?? 1280,
        viewport_height: request.viewport_height ?? 720,
        user_agent: request.user_agent ?? null,
        created_at: at,
        last_activity: at,
        expires_at: new Date(Date.now() + (request.idle_timeout_seconds ?? 300) * 1000).toISOString(),
        idle_timeout_seconds: request.idle_timeout_seconds ?? 300,
        url: 'about:blank',
        pages_visited: 0,
        screenshots_taken: 0,
        closed_at: null,
        end_reason: null,
      };
      sessions.set(session.session_id, { userId: principal.userId, record: session });
      return session;
    },
    async listSessions(principal) {
      record('listSessions', principal, null);
      return { sessions: [...sessions.values()].filter((s) => s.userId === principal.userId && s.record.status === 'active').map((s) => s.record) };
    },
    async getSession(principal, sessionId) {
      record('getSession', principal, sessionId);
      const session = sessions.get(sessionId);
      if (!session || session.userId !== principal.userId) throw notFound(`browser session ${sessionId}`);
      return session.record;
    },
    async closeSession(principal, sessionId) {
      record('closeSession', principal, sessionId);
      const session = open(principal, sessionId);
      Object.assign(session, { status: 'closed', closed_at: now(), end_reason: 'closed' });
      return { success: true, session_id: sessionId, message: `browser session ${sessionId} closed` };
    },
    async capabilities(principal) {
      record('capabilities', principal, null);
      return {
        engine: 'chromium',
        version: '0.0.0-fake',
        interactions: ['navigate', 'click', 'type', 'fill', 'scroll', 'wait', 'hover', 'keypress', 'screenshot', 'extract', 'content', 'fill-credential'],
        screenshot_formats: ['png', 'jpeg'],
        wait_conditions: ['selector', 'hidden', 'navigation', 'load', 'domcontentloaded', 'networkidle', 'timeout'],
        wait_until: ['load', 'domcontentloaded', 'networkidle', 'commit'],
        max_viewport: { width: 3840, height: 2160 },
        default_viewport: { width: 1280, height: 720 },
        idle_timeout_seconds: 300,
        max_session_seconds: 3600,
        max_sessions: maxSessions,
        warm_pool_size: 0,
      };
    },

    async navigate(principal, request) {
      record('navigate', principal, request);
      const session = open(principal, request.session_id);
      load(request.url);
      session.url = request.url;
      session.pages_visited += 1;
      return done(session, `navigated to ${request.url}`, { url: request.url, title: 'Fake page' });
    },
    async click(principal, request) {
      record('click', principal, request);
      const session = open(principal, request.session_id);
      element(request.selector);
      return done(session, `clicked ${request.selector}`);
    },
    async type(principal, request) {
      record('type', principal, request);
      const session = open(principal, request.session_id);
      element(request.selector);
      return done(session, `typed ${request.text.length} characters into ${request.selector}`);
    },
    async fill(principal, request) {
      record('fill', principal, request);
      const session = open(principal, request.session_id);
      element(request.selector);
      return done(session, `filled ${request.selector}`);
    },
    async scroll(principal, request) {
      record('scroll', principal, request);
      const session = open(principal, request.session_id);
      element(request.selector);
      return done(session, 'scrolled', { x: request.x ?? 0, y: request.y ?? 0 });
    },
    async wait(principal, request) {
      record('wait', principal, request);
      const session = open(principal, request.session_id);
      element(request.selector);
      return done(session, `waited for ${request.condition}`);
    },
    async hover(principal, request) {
      record('hover', principal, request);
      const session = open(principal, request.session_id);
      element(request.selector);
      return done(session, `hovered over ${request.selector}`);
    },
    async keypress(principal, request) {
      record('keypress', principal, request);
      const session = open(principal, request.session_id);
      element(request.selector);
      return done(session, `pressed ${request.key}`);
    },
    async screenshot(principal, request) {
      record('screenshot', principal, request);
      const session = open(principal, request.session_id);
      session.screenshots_taken += 1;
      const format = request.format ?? 'png';
      return { screenshot: image(format), format, width: 1, height: 1, execution_time: 0.01, session_id: session.session_id, usage_info: usageOf(session) };
    },
    async extract(principal, request) {
      record('extract', principal, request);
      const session = open(principal, request.session_id);
      const attributes = Object.fromEntries((request.attributes ?? []).map((name) => [name, name === 'id' ? 'title' : null]));
      const elements = [{ tag: 'h1', text: 'Fake page', attributes, selector: 'h1#title', visible: true, value: null }];
      return { elements, count: elements.length, execution_time: 0.01, session_id: session.session_id };
    },
    async content(principal, request) {
      record('content', principal, request);
      const session = open(principal, request.session_id);
      return {
        readable_content: { content: 'Fake page\nHello.', title: 'Fake page', length: 16 },
        interactive_elements: request.include_interactive === false ? [] : [{ type: 'link', text: 'More', selector: 'a#more', attributes: { href: 'https://example.com/more' } }],
        content_anchors: request.include_anchors === false ? [] : [{ text: 'Hello.', selector: 'p:nth-of-type(1)', href: null }],
        execution_time: 0.01,
        session_id: session.session_id,
        url: session.url,
        usage_info: usageOf(session),
      };
    },
    async fillCredential(principal, request) {
      record('fillCredential', principal, request);
      const session = open(principal, request.session_id);
      const credential = credentialOf(principal, request.credential_id);
      element(request.username_selector);
      element(request.password_selector);
      credential.record.last_used_at = now();
      return done(session, `filled credential ${credential.record.name}`, { submitted: request.submit ?? false });
    },

    async render(principal, request) {
      record('render', principal, request);
      const url = request.url ?? 'about:srcdoc';
      load(url);
      for (const action of request.actions ?? []) element(typeof action.selector === 'string' ? action.selector : null);
      const format = request.format ?? 'png';
      const usageId = nextUsageId++;
      renders.set(usageId, {
        userId: principal.userId,
        format,
        record: { usage_id: usageId, kind: 'render', session_id: null, url, status: 'ok', error: null, pages: 1, screenshots: 1, duration_seconds: 0.02, has_screenshot: true, created_at: now() },
      });
      const wantScreenshot = request.return_screenshot !== false;
      return {
        success: true,
        usage_id: usageId,
        url,
        title: 'Fake page',
        status_code: request.url ? 200 : null,
        screenshot: wantScreenshot ? image(format) : null,
        format: wantScreenshot ? format : null,
        width: 1,
        height: 1,
        html: request.return_html ? (request.html ?? '<html><head><title>Fake page</title></head><body><h1>Fake page</h1></body></html>') : null,
        text: request.return_text ? 'Fake page' : null,
        execution_time: 0.02,
        screenshot_url: `/v1/browser/screenshot/${usageId}`,
      };
    },
    async usage(principal) {
      record('usage', principal, null);
      const mine = [...renders.values()].filter((r) => r.userId === principal.userId);
      const mySessions = [...sessions.values()].filter((s) => s.userId === principal.userId);
      const totals = { renders: mine.length, sessions: mySessions.length, pages: mine.length, screenshots: mine.length, total_seconds: mine.length * 0.02 };
      return { user_id: principal.userId, ...totals, active_sessions: mySessions.filter((s) => s.record.status === 'active').length, max_sessions: maxSessions, last_30_days: totals };
    },
    async usageHistory(principal, page) {
      record('usageHistory', principal, page);
      const mine = [...renders.values()].filter((r) => r.userId === principal.userId).map((r) => r.record).reverse();
      return { items: mine.slice(page.offset, page.offset + page.limit), total: mine.length, limit: page.limit, offset: page.offset };
    },
    async storedScreenshot(principal, usageId) {
      record('storedScreenshot', principal, usageId);
      const render = renders.get(usageId);
      if (!render || render.userId !== principal.userId) throw notFound(`usage record ${usageId}`);
      const screenshot = image(render.format);
      return {
        usage_id: usageId,
        format: render.format,
        content_type: `image/${render.format}`,
        screenshot,
        bytes: Buffer.from(screenshot, 'base64').length,
        created_at: render.record.created_at,
        expires_at: null,
      };
    },
    async authTest(principal) {
      record('authTest', principal, null);
      return { success: true, authenticated: true, user_id: principal.userId, username: principal.username, plan: principal.plan, browser_available: true, message: 'authenticated' };
    },

    async createCredential(principal, request) {
      record('createCredential', principal, { ...request, password: '(hidden)' });
      if ([...credentials.values()].some((c) => c.userId === principal.userId && c.record.name === request.name)) throw new AppError('CONFLICT', `you have a credential named ${request.name}`);
      const at = now();
      const credential: BrowserCredentialRecord = {
        credential_id: `cred_${nextCredential++}`,
        name: request.name,
        username: request.username,
        allowed_hosts: request.allowed_hosts,
        created_at: at,
        updated_at: at,
        last_used_at: null,
      };
      credentials.set(credential.credential_id, { userId: principal.userId, record: credential, password: request.password });
      return credential;
    },
    async listCredentials(principal) {
      record('listCredentials', principal, null);
      return { credentials: [...credentials.values()].filter((c) => c.userId === principal.userId).map((c) => c.record) };
    },
    async getCredential(principal, credentialId) {
      record('getCredential', principal, credentialId);
      return credentialOf(principal, credentialId).record;
    },
    async updateCredential(principal, credentialId, request) {
      record('updateCredential', principal, { credentialId, ...request, ...(request.password ? { password: '(hidden)' } : {}) });
      const credential = credentialOf(principal, credentialId);
      if (request.password !== undefined) credential.password = request.password;
      Object.assign(credential.record, {
        ...(request.username !== undefined ? { username: request.username } : {}),
        ...(request.allowed_hosts !== undefined ? { allowed_hosts: request.allowed_hosts } : {}),
        updated_at: now(),
      });
      return credential.record;
    },
    async deleteCredential(principal, credentialId) {
      record('deleteCredential', principal, credentialId);
      credentialOf(principal, credentialId);
      credentials.delete(credentialId);
    },
  };
}
