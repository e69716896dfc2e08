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
  BrowserRenderResult,
  BrowserScreenshotResult,
  BrowserSessionInfo,
  BrowserStoredScreenshot,
  BrowserUsageHistory,
  BrowserUsageSummary,
  JsonResponse,
} from '../api-types.ts';
import { decodeBase64 } from '../base64.ts';
import { BrowserSessionError, SandboxdError, type OperationKind } from '../errors.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { wholeSeconds } from '../durations.ts';
import type { WithCamelCase } from '../camel-case.ts';
import type {
  ScreenshotFormat,
  WaitCondition,
  BrowserSessionCreateOptions,
  NavigateOptions,
  ElementOptions,
  ClickOptions,
  TypeOptions,
  ScrollTarget,
  BrowserWaitOptions,
  KeypressOptions,
  ScreenshotOptions,
  ExtractOptions,
  ContentOptions,
  FillCredentialOptions,
  BrowserRenderOptions,
  BrowserImage,
  BrowserCredentialCreateOptions,
  BrowserCredentialChanges,
} from './browser-options.ts';

// The options' types live in browser-options.ts; callers import them from here (or from the package).
export type * from './browser-options.ts';

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
    return this.browser.interact(
      '/v1/browser/interactions/navigate',
      'browser.navigate',
      {
        session_id: this.id,
        url,
        wait_timeout: options.waitTimeout,
        wait_until: options.waitUntil,
      },
      options,
    );
  }

  click(selector: string, options: ClickOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact(
      '/v1/browser/interactions/click',
      'browser.element',
      {
        session_id: this.id,
        selector,
        force: options.force,
        timeout: options.timeout,
        button: options.button,
        click_count: options.clickCount,
      },
      options,
    );
  }

  /** Types `text` key by key (`fill` sets a value at once). */
  type(selector: string, text: string, options: TypeOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact(
      '/v1/browser/interactions/type',
      'browser.element',
      {
        session_id: this.id,
        selector,
        text,
        delay: options.delay,
        timeout: options.timeout,
      },
      options,
    );
  }

  fill(selector: string, value: string, options: ElementOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact(
      '/v1/browser/interactions/fill',
      'browser.element',
      { session_id: this.id, selector, value, timeout: options.timeout },
      options,
    );
  }

  /** Scrolls `{ selector }` into view, or the page to `{ x, y }`; `data` has the resulting position. */
  scroll(target: ScrollTarget, options: CallOptions = {}): Promise<BrowserInteractionResult> {
    if (target.selector === undefined && target.x === undefined && target.y === undefined) {
      throw new TypeError('scroll needs a selector, or x and/or y');
    }
    return this.browser.interact(
      '/v1/browser/interactions/scroll',
      'browser.element',
      {
        session_id: this.id,
        selector: target.selector,
        x: target.x,
        y: target.y,
      },
      options,
    );
  }

  /** Waits for `condition`: `selector`/`hidden` (with `options.selector`), a load state, or `timeout` milliseconds. */
  wait(condition: WaitCondition, options: BrowserWaitOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact(
      '/v1/browser/interactions/wait',
      'browser.element',
      {
        session_id: this.id,
        condition,
        selector: options.selector,
        timeout: options.timeout,
      },
      options,
    );
  }

  hover(selector: string, options: ElementOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact('/v1/browser/interactions/hover', 'browser.element', { session_id: this.id, selector, timeout: options.timeout }, options);
  }

  /** Presses a key (`Enter`, `Tab`, `Control+A`…), in `options.selector` or the focused element. */
  keypress(key: string, options: KeypressOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact(
      '/v1/browser/interactions/keypress',
      'browser.element',
      {
        session_id: this.id,
        key,
        selector: options.selector,
        timeout: options.timeout,
      },
      options,
    );
  }

  /** The page as an image: `bytes` (PNG unless `format: 'jpeg'`), its size, and the server's answer. */
  async screenshot(options: ScreenshotOptions = {}): Promise<BrowserImage & { width: number; height: number; result: BrowserScreenshotResult }> {
    const result = await this.browser.interact(
      '/v1/browser/interactions/screenshot',
      'browser',
      {
        session_id: this.id,
        full_page: options.fullPage,
        format: options.format,
        clip: options.clip,
        quality: options.quality,
      },
      options,
    );
    return { ...screenshotBytes(result), width: result.width, height: result.height, result };
  }

  /** Elements of the page with their text, the attributes asked for, and a selector for each. */
  extract(options: ExtractOptions = {}): Promise<BrowserExtractResult> {
    return this.browser.interact(
      '/v1/browser/interactions/extract',
      'browser',
      {
        session_id: this.id,
        selector: options.selector,
        attributes: options.attributes,
        max_elements: options.maxElements,
      },
      options,
    );
  }

  /** The page as text for a language model: readable content, interactive elements, anchors. */
  content(options: ContentOptions = {}): Promise<BrowserContentResult> {
    return this.browser.interact(
      '/v1/browser/interactions/content',
      'browser',
      {
        session_id: this.id,
        include_interactive: options.includeInteractive,
        include_anchors: options.includeAnchors,
        max_anchors: options.maxAnchors,
      },
      options,
    );
  }

  /** Fills a stored credential into the page's login form (only on its allowed hosts). */
  fillCredential(credentialId: string, options: FillCredentialOptions = {}): Promise<BrowserInteractionResult> {
    return this.browser.interact(
      '/v1/browser/interactions/fill-credential',
      'browser.element',
      {
        session_id: this.id,
        credential_id: credentialId,
        username_selector: options.usernameSelector,
        password_selector: options.passwordSelector,
        submit: options.submit,
        timeout: options.timeout,
      },
      options,
    );
  }

  /** Its status, current URL and expiry. */
  info(options: CallOptions = {}): Promise<BrowserSessionInfo> {
    return this.browser.getSession(this.id, options);
  }

  /** Closes it: true when this call closed it, false when it was already closed. */
  close(options: CallOptions = {}): Promise<boolean> {
    return this.browser.closeSession(this.id, options);
  }

  /** `await using page = await client.browser.createSession()`: closed when the block ends. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** Stored logins that `fillCredential` fills into pages of their allowed hosts; passwords are never shown again. */
export class BrowserCredentials {
  constructor(private readonly transport: Transport) {}

  create(options: BrowserCredentialCreateOptions & CallOptions): Promise<BrowserCredential> {
    return this.transport.call('/v1/browser/credentials', 'post', {
      json: { name: options.name, username: options.username, password: options.password, allowed_hosts: options.allowedHosts },
      signal: options.signal,
    });
  }

  async list(options: CallOptions = {}): Promise<BrowserCredential[]> {
    return (await this.transport.call('/v1/browser/credentials', 'get', { signal: options.signal })).credentials;
  }

  get(credentialId: string, options: CallOptions = {}): Promise<BrowserCredential> {
    return this.transport.call('/v1/browser/credentials/{credential_id}', 'get', { params: { credential_id: credentialId }, signal: options.signal });
  }

  /** Absent fields are kept; `allowedHosts` replaces the list. */
  update(credentialId: string, changes: BrowserCredentialChanges, options: CallOptions = {}): Promise<BrowserCredential> {
    return this.transport.call('/v1/browser/credentials/{credential_id}', 'patch', {
      params: { credential_id: credentialId },
      json: defined({ username: changes.username, password: changes.password, allowed_hosts: changes.allowedHosts }),
      signal: options.signal,
    });
  }

  async delete(credentialId: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/browser/credentials/{credential_id}', 'delete', { params: { credential_id: credentialId }, signal: options.signal });
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
      signal: options.signal,
    });
    return new BrowserSession(this, info.session_id, info);
  }

  /** A BrowserSession object for an existing session id (no request is made). */
  session(sessionId: string): BrowserSession {
    return new BrowserSession(this, sessionId);
  }

  /** Your open sessions. */
  async listSessions(options: CallOptions = {}): Promise<BrowserSessionInfo[]> {
    return (await this.transport.call('/v1/browser/sessions/', 'get', { signal: options.signal })).sessions;
  }

  getSession(sessionId: string, options: CallOptions = {}): Promise<BrowserSessionInfo> {
    return this.transport.call('/v1/browser/sessions/{session_id}', 'get', { params: { session_id: sessionId }, kind: 'browser', signal: options.signal });
  }

  /** Closes a session: true when this call closed it (200), false when it was already closed (404). */
  async closeSession(sessionId: string, options: CallOptions = {}): Promise<boolean> {
    try {
      await this.transport.call('/v1/browser/sessions/{session_id}', 'delete', { params: { session_id: sessionId }, kind: 'browser', signal: options.signal });
      return true;
    } catch (error) {
      if (error instanceof BrowserSessionError && error.status === 404) return false;
      throw error;
    }
  }

  capabilities(options: CallOptions = {}): Promise<BrowserCapabilities> {
    return this.transport.call('/v1/browser/capabilities', 'get', { signal: options.signal });
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
      signal: options.signal,
    });
  }

  /** Renders a page and answers its screenshot as bytes, with the whole answer. */
  async renderScreenshot(options: BrowserRenderOptions): Promise<BrowserImage & { result: BrowserRenderResult }> {
    const result = await this.render({ ...options, returnScreenshot: true });
    return { ...screenshotBytes(result), result };
  }

  /** Renders, sessions, pages and browser seconds, in all and in the last 30 days. */
  usage(options: CallOptions = {}): Promise<BrowserUsageSummary> {
    return this.transport.call('/v1/browser/usage', 'get', { signal: options.signal });
  }

  /** Usage records, newest first (default 50 from 0). */
  usageHistory(options: { limit?: number; offset?: number } & CallOptions = {}): Promise<BrowserUsageHistory> {
    return this.transport.call('/v1/browser/usage/history', 'get', { query: { limit: options.limit, offset: options.offset }, signal: options.signal });
  }

  /** The stored screenshot of a render, as bytes, with its record. */
  async screenshot(usageId: number, options: CallOptions = {}): Promise<BrowserImage & { record: BrowserStoredScreenshot }> {
    const record = await this.transport.call('/v1/browser/screenshot/{usage_id}', 'get', { params: { usage_id: usageId }, signal: options.signal });
    return { bytes: decodeBase64(record.screenshot), format: record.format, record };
  }

  /** Who the key belongs to, and whether a browser can be started now. */
  authTest(options: CallOptions = {}): Promise<BrowserAuthTestResult> {
    return this.transport.call('/v1/browser/auth/test', 'post', { json: {}, signal: options.signal });
  }

  /** @internal One interaction of a session (BrowserSession's methods call this). */
  interact<P extends InteractionPath>(
    path: P,
    kind: OperationKind,
    json: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<WithCamelCase<JsonResponse<P, 'post'>>> {
    return this.transport.call(path, 'post', { json: defined(json) as never, kind, signal: options.signal });
  }
}
