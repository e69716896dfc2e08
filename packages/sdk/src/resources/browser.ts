/**
 * Browser automation: sessions (a Chromium of their own, driven by interactions), one-shot renders, usage, stored
 * screenshots and stored credentials.
 *
 *   const page = await client.browser.createSession({ viewportWidth: 1280, viewportHeight: 720 });
 *   await page.navigate('https://example.com');
 *   const { bytes } = await page.screenshot();   // PNG bytes
 *   await page.close();
 *
 * Errors: `ElementNotFoundError` (with `selector`), `BrowserTimeoutError`, `BrowserNavigationError`,
 * `BrowserSessionError` (the session is not open, or not yours), `QuotaExceededError` (all your sessions are open).
 * Timeouts are milliseconds, as the server takes them.
 */
import type {
  BrowserAuthTestResult,
  BrowserCapabilities,
  BrowserContentResult,
  BrowserCredential,
  BrowserExtractResult,
  BrowserInteractionResult,
  BrowserRenderActionInput,
  BrowserRenderResult,
  BrowserScreenshotResult,
  BrowserSessionInfo,
  BrowserStoredScreenshot,
  BrowserUsageHistory,
  BrowserUsageSummary,
  JsonBody,
  JsonResponse,
} from '../api-types.ts';
import { decodeBase64 } from '../base64.ts';
import { BrowserSessionError, SandboxdError, type OperationKind } from '../errors.ts';
import type { Transport } from '../transport.ts';
import { wholeSeconds } from '../durations.ts';
import type { WithCamelCase } from '../camel-case.ts';

export type ScreenshotFormat = 'png' | 'jpeg';
export type WaitUntil = 'load' | 'domcontentloaded' | 'networkidle' | 'commit';
/**
 * What `wait` waits for (from the served document): an element's state (`visible` — or `selector` —, `hidden`,
 * `attached`, `detached`; each with a selector), a load state, or `timeout`.
 */
export type WaitCondition = JsonBody<'/v1/browser/interactions/wait', 'post'>['condition'];

/** A rectangle of the page, pixels from its top left. */
export interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface BrowserSessionCreateOptions {
  /** 100 to 3840 (default 1280). */
  viewportWidth?: number;
  /** 100 to 2160 (default 720). */
  viewportHeight?: number;
  userAgent?: string | null;
  /** Milliseconds without an interaction before the server closes it, rounded up to whole seconds (default and maximum: the server's, see `capabilities()`). */
  idleTimeoutMs?: number;
  /** @deprecated Use `idleTimeoutMs` (milliseconds, like every duration of this client). */
  idleTimeoutSeconds?: number;
}

export interface NavigateOptions {
  /** Milliseconds to wait for the page (default 30000, at most 120000). */
  waitTimeout?: number;
  /** When the page counts as loaded (default `load`). */
  waitUntil?: WaitUntil;
}

export interface ElementOptions {
  /** Milliseconds to wait for the element (default 30000, at most 120000). */
  timeout?: number;
}

export interface ClickOptions extends ElementOptions {
  /** Click even if the element is covered, hidden or disabled. */
  force?: boolean;
  button?: 'left' | 'right' | 'middle';
  /** 2 for a double click. */
  clickCount?: number;
}

export interface TypeOptions extends ElementOptions {
  /** Milliseconds between key presses (default 100). */
  delay?: number;
}

/** Scroll an element into view, or the page to `x`/`y` (absolute pixels). */
export type ScrollTarget = { selector: string; x?: never; y?: never } | { selector?: never; x?: number; y?: number };

export interface BrowserWaitOptions extends ElementOptions {
  /** The element of the `selector` and `hidden` conditions. */
  selector?: string;
}

export interface KeypressOptions extends ElementOptions {
  /** Press it in this element (default: the focused one). */
  selector?: string;
}

export interface ScreenshotOptions {
  /** The whole page instead of the viewport. */
  fullPage?: boolean;
  format?: ScreenshotFormat;
  clip?: Clip;
  /** JPEG quality, 0 to 100. */
  quality?: number;
}

export interface ExtractOptions {
  /** Default `body *`. */
  selector?: string;
  /** Attributes to read besides text and tag. */
  attributes?: string[];
  /** Default 100, at most 1000. */
  maxElements?: number;
}

export interface ContentOptions {
  includeInteractive?: boolean;
  includeAnchors?: boolean;
  /** Default 50. */
  maxAnchors?: number;
}

export interface FillCredentialOptions extends ElementOptions {
  usernameSelector?: string;
  passwordSelector?: string;
  /** Press Enter in the password field after filling. */
  submit?: boolean;
}

/** A render's page: `url` or inline `html`, exactly one. */
export interface BrowserRenderOptions extends ScreenshotOptions {
  url?: string;
  html?: string;
  /** Viewport, pixels (default 1280×720). */
  width?: number;
  height?: number;
  userAgent?: string | null;
  waitUntil?: WaitUntil;
  /** Also wait until this element is visible. */
  waitForSelector?: string;
  /** Milliseconds for loading and `waitForSelector` together (default 30000). */
  waitTimeout?: number;
  returnHtml?: boolean;
  returnText?: boolean;
  /** Default true. */
  returnScreenshot?: boolean;
  /**
   * Interactions after loading, in order: `{ type: 'click', selector: '#accept' }`, `{ type: 'fill', selector, value }`,
   * `{ type: 'navigate', url }`… (each type with its interaction's fields, snake_case, as the server takes them).
   */
  actions?: BrowserRenderActionInput[];
}

/** An image the server sent base64, decoded. */
export interface BrowserImage {
  bytes: Uint8Array;
  format: ScreenshotFormat;
}

export interface BrowserCredentialCreateOptions {
  /** Unique among your credentials. */
  name: string;
  username: string;
  /** Never shown again: no answer or list has it. */
  password: string;
  /** The hosts it may be filled on: `example.com` (exactly) or `*.example.com`. */
  allowedHosts: string[];
}

export type BrowserCredentialChanges = Partial<Omit<BrowserCredentialCreateOptions, 'name'>>;

export { decodeBase64 };

/** The screenshot of a render (or of a session), as bytes; an error when the answer has none (`returnScreenshot: false`). */
export function screenshotBytes(result: { screenshot: string | null; format: ScreenshotFormat | null }): BrowserImage {
  if (result.screenshot === null || result.format === null)
    throw new SandboxdError('the answer has no screenshot (it was rendered with returnScreenshot: false)');
  return { bytes: decodeBase64(result.screenshot), format: result.format };
}

/** The object with only its defined values (absent options are left to the server's defaults). */
function defined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}

type InteractionPath =
  | '/v1/browser/interactions/navigate'
  | '/v1/browser/interactions/click'
  | '/v1/browser/interactions/type'
  | '/v1/browser/interactions/fill'
  | '/v1/browser/interactions/scroll'
  | '/v1/browser/interactions/wait'
  | '/v1/browser/interactions/hover'
  | '/v1/browser/interactions/keypress'
  | '/v1/browser/interactions/screenshot'
  | '/v1/browser/interactions/extract'
  | '/v1/browser/interactions/content'
  | '/v1/browser/interactions/fill-credential';

/** A browser session as an object: `await client.browser.createSession()` gives one; its methods drive that browser. */
export class BrowserSession {
  constructor(
    private readonly browser: Browser,
    /** The session id. */
    readonly id: string,
    /** What creating it answered (absent for `client.browser.session(id)`). */
    readonly created?: BrowserSessionInfo,
  ) {}

  /** Loads `url` and waits until it is loaded; `data` has the final `url` and the `title`. */
  navigate(url: string, options: NavigateOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/navigate', 'browser.navigate', {
      session_id: this.id,
      url,
      wait_timeout: options.waitTimeout,
      wait_until: options.waitUntil,
    });
  }

  click(selector: string, options: ClickOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/click', 'browser.element', {
      session_id: this.id,
      selector,
      force: options.force,
      timeout: options.timeout,
      button: options.button,
      click_count: options.clickCount,
    });
  }

  /** Types `text` key by key (`fill` sets a value at once). */
  type(selector: string, text: string, options: TypeOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/type', 'browser.element', {
      session_id: this.id,
      selector,
      text,
      delay: options.delay,
      timeout: options.timeout,
    });
  }

  fill(selector: string, value: string, options: ElementOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/fill', 'browser.element', { session_id: this.id, selector, value, timeout: options.timeout });
  }

  /** Scrolls `{ selector }` into view, or the page to `{ x, y }`; `data` has the resulting position. */
  scroll(target: ScrollTarget): Promise<BrowserInteractionResult> {
    if (target.selector === undefined && target.x === undefined && target.y === undefined) {
      throw new TypeError('scroll needs a selector, or x and/or y');
    }
    return this.browser.interact('/v1/browser/interactions/scroll', 'browser.element', {
      session_id: this.id,
      selector: target.selector,
      x: target.x,
      y: target.y,
    });
  }

  /** Waits for `condition`: `selector`/`hidden` (with `options.selector`), a load state, or `timeout` milliseconds. */
  wait(condition: WaitCondition, options: BrowserWaitOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/wait', 'browser.element', {
      session_id: this.id,
      condition,
      selector: options.selector,
      timeout: options.timeout,
    });
  }

  hover(selector: string, options: ElementOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/hover', 'browser.element', { session_id: this.id, selector, timeout: options.timeout });
  }

  /** Presses a key (`Enter`, `Tab`, `Control+A`…), in `options.selector` or the focused element. */
  keypress(key: string, options: KeypressOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/keypress', 'browser.element', {
      session_id: this.id,
      key,
      selector: options.selector,
      timeout: options.timeout,
    });
  }

  /** The page as an image: `bytes` (PNG unless `format: 'jpeg'`), its size, and the server's answer. */
  async screenshot(options: ScreenshotOptions = {}): Promise<BrowserImage & { width: number; height: number; result: BrowserScreenshotResult }> {
    const result = await this.browser.interact('/v1/browser/interactions/screenshot', 'browser', {
      session_id: this.id,
      full_page: options.fullPage,
      format: options.format,
      clip: options.clip,
      quality: options.quality,
    });
    return { ...screenshotBytes(result), width: result.width, height: result.height, result };
  }

  /** Elements of the page with their text, the attributes asked for, and a selector for each. */
  extract(options: ExtractOptions = {}): Promise<BrowserExtractResult> {
    return this.browser.interact('/v1/browser/interactions/extract', 'browser', {
      session_id: this.id,
      selector: options.selector,
      attributes: options.attributes,
      max_elements: options.maxElements,
    });
  }

  /** The page as text for a language model: readable content, interactive elements, anchors. */
  content(options: ContentOptions = {}): Promise<BrowserContentResult> {
    return this.browser.interact('/v1/browser/interactions/content', 'browser', {
      session_id: this.id,
      include_interactive: options.includeInteractive,
      include_anchors: options.includeAnchors,
      max_anchors: options.maxAnchors,
    });
  }

  /** Fills a stored credential into the page's login form (only on its allowed hosts). */
  fillCredential(credentialId: string, options: FillCredentialOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/fill-credential', 'browser.element', {
      session_id: this.id,
      credential_id: credentialId,
      username_selector: options.usernameSelector,
      password_selector: options.passwordSelector,
      submit: options.submit,
      timeout: options.timeout,
    });
  }

  /** Its status, current URL and expiry. */
  info(): Promise<BrowserSessionInfo> {
    return this.browser.getSession(this.id);
  }

  /** Closes it: true when this call closed it, false when it was already closed. */
  close(): Promise<boolean> {
    return this.browser.closeSession(this.id);
  }

  /** `await using page = await client.browser.createSession()`: closed when the block ends. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Stored logins that `fillCredential` fills into pages of their allowed hosts; passwords are never shown again. */
export class BrowserCredentials {
  constructor(private readonly transport: Transport) {}

  create(options: BrowserCredentialCreateOptions): Promise<BrowserCredential> {
    return this.transport.call('/v1/browser/credentials', 'post', {
      json: { name: options.name, username: options.username, password: options.password, allowed_hosts: options.allowedHosts },
    });
  }

  async list(): Promise<BrowserCredential[]> {
    return (await this.transport.call('/v1/browser/credentials', 'get')).credentials;
  }

  get(credentialId: string): Promise<BrowserCredential> {
    return this.transport.call('/v1/browser/credentials/{credential_id}', 'get', { params: { credential_id: credentialId } });
  }

  /** Absent fields are kept; `allowedHosts` replaces the list. */
  update(credentialId: string, changes: BrowserCredentialChanges): Promise<BrowserCredential> {
    return this.transport.call('/v1/browser/credentials/{credential_id}', 'patch', {
      params: { credential_id: credentialId },
      json: defined({ username: changes.username, password: changes.password, allowed_hosts: changes.allowedHosts }),
    });
  }

  async delete(credentialId: string): Promise<void> {
    await this.transport.call('/v1/browser/credentials/{credential_id}', 'delete', { params: { credential_id: credentialId } });
  }
}

export class Browser {
  readonly credentials: BrowserCredentials;

  constructor(private readonly transport: Transport) {
    this.credentials = new BrowserCredentials(transport);
  }

  /** Starts a browser on a blank page; 429 (QuotaExceededError) when all the sessions your plan allows are open. */
  async createSession(options: BrowserSessionCreateOptions = {}): Promise<BrowserSession> {
    const info = await this.transport.call('/v1/browser/sessions/', 'post', {
      json: defined({
        viewport_width: options.viewportWidth,
        viewport_height: options.viewportHeight,
        user_agent: options.userAgent,
        idle_timeout_seconds: wholeSeconds(options.idleTimeoutMs, options.idleTimeoutSeconds, ['idleTimeoutMs', 'idleTimeoutSeconds']),
      }) as never,
      kind: 'browser.session.create',
    });
    return new BrowserSession(this, info.session_id, info);
  }

  /** A BrowserSession object for an existing session id (no request is made). */
  session(sessionId: string): BrowserSession {
    return new BrowserSession(this, sessionId);
  }

  /** Your open sessions. */
  async listSessions(): Promise<BrowserSessionInfo[]> {
    return (await this.transport.call('/v1/browser/sessions/', 'get')).sessions;
  }

  getSession(sessionId: string): Promise<BrowserSessionInfo> {
    return this.transport.call('/v1/browser/sessions/{session_id}', 'get', { params: { session_id: sessionId }, kind: 'browser' });
  }

  /** Closes a session: true when this call closed it (200), false when it was already closed (404). */
  async closeSession(sessionId: string): Promise<boolean> {
    try {
      await this.transport.call('/v1/browser/sessions/{session_id}', 'delete', { params: { session_id: sessionId }, kind: 'browser' });
      return true;
    } catch (error) {
      if (error instanceof BrowserSessionError && error.status === 404) return false;
      throw error;
    }
  }

  capabilities(): Promise<BrowserCapabilities> {
    return this.transport.call('/v1/browser/capabilities', 'get');
  }

  /**
   * Renders a page once in a fresh browser: the answer has the screenshot (base64; `screenshotBytes(result)` decodes
   * it), and the HTML and text when asked. `usage_id` finds the stored screenshot again (`screenshot(usageId)`).
   */
  render(options: BrowserRenderOptions): Promise<BrowserRenderResult> {
    return this.transport.call('/v1/browser/render', 'post', {
      json: defined({
        url: options.url,
        html: options.html,
        width: options.width,
        height: options.height,
        user_agent: options.userAgent,
        wait_until: options.waitUntil,
        wait_for_selector: options.waitForSelector,
        wait_timeout: options.waitTimeout,
        full_page: options.fullPage,
        clip: options.clip,
        format: options.format,
        quality: options.quality,
        return_html: options.returnHtml,
        return_text: options.returnText,
        return_screenshot: options.returnScreenshot,
        actions: options.actions,
      }) as never,
      kind: 'browser.render',
    });
  }

  /** Renders a page and answers its screenshot as bytes, with the whole answer. */
  async renderScreenshot(options: BrowserRenderOptions): Promise<BrowserImage & { result: BrowserRenderResult }> {
    const result = await this.render({ ...options, returnScreenshot: true });
    return { ...screenshotBytes(result), result };
  }

  /** Renders, sessions, pages and browser seconds, in all and in the last 30 days. */
  usage(): Promise<BrowserUsageSummary> {
    return this.transport.call('/v1/browser/usage', 'get');
  }

  /** Usage records, newest first (default 50 from 0). */
  usageHistory(options: { limit?: number; offset?: number } = {}): Promise<BrowserUsageHistory> {
    return this.transport.call('/v1/browser/usage/history', 'get', { query: { limit: options.limit, offset: options.offset } });
  }

  /** The stored screenshot of a render, as bytes, with its record. */
  async screenshot(usageId: number): Promise<BrowserImage & { record: BrowserStoredScreenshot }> {
    const record = await this.transport.call('/v1/browser/screenshot/{usage_id}', 'get', { params: { usage_id: usageId } });
    return { bytes: decodeBase64(record.screenshot), format: record.format, record };
  }

  /** Who the key belongs to, and whether a browser can be started now. */
  authTest(): Promise<BrowserAuthTestResult> {
    return this.transport.call('/v1/browser/auth/test', 'post', { json: {} });
  }

  /** @internal One interaction of a session (BrowserSession's methods call this). */
  interact<P extends InteractionPath>(path: P, kind: OperationKind, json: Record<string, unknown>): Promise<WithCamelCase<JsonResponse<P, 'post'>>> {
    return this.transport.call(path, 'post', { json: defined(json) as never, kind });
  }
}
