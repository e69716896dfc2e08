/**
 * The core's `BrowserDriver` over Playwright (`playwright-core`, no browser download): it connects to the Chromium
 * of a browser-template VM with `connectOverCDP` through the agent's TCP tunnel (`cdp-bridge.ts`) and drives the
 * page the browser opened at start.
 *
 * Why that page, not a new context: a VM serves one browser session and is killed after it, so its default context
 * is already that session's alone (a new context would also start a new renderer process, ~10 s under TCG). The
 * page and renderer were started before the snapshot; what a user's page does runs after the restore.
 *
 * Why the network service is restarted first: Chromium's TLS lives in its network service process, whose random
 * generator (BoringSSL's, seeded once per process) would be the same in every VM restored from one snapshot. Killing
 * it makes Chromium start a fresh one, seeded from the guest's kernel, which the engine reseeded at the restore.
 */
import { imageSize } from 'image-size';
import type * as PlaywrightCore from 'playwright-core';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { AppError } from '../core/errors.ts';
import type { BrowserDriver, BrowserPage, PageContent, Screenshot, ScreenshotOptions, Viewport } from '../core/browser/browser-driver.ts';
import { ELEMENT_WAIT_STATES, type ExtractedElement, type WaitCondition, type WaitUntil } from '../contract/browser/index.ts';
import type { GuestAgent } from '../core/vm-engine.ts';
import { CdpBridge } from './cdp-bridge.ts';
import { call, CONTENT_SCRIPT, EXTRACT_SCRIPT, SCROLL_POSITION_SCRIPT, SCROLL_TO_SCRIPT, TEXT_SCRIPT } from './page-scripts.ts';

import { BROWSER_DEVTOOLS_PORT as DEVTOOLS_PORT } from '../image/flavours.ts';
const CONNECT_TIMEOUT_MS = 60_000;

/**
 * playwright-core, loaded when the first browser is reached: importing it takes ~0.45 s of CPU, paid otherwise at
 * every start of a server that may never open a browser (and of every test file that starts one).
 */
let playwright: typeof PlaywrightCore | undefined;
async function loadPlaywright(): Promise<typeof PlaywrightCore> {
  return (playwright ??= await import('playwright-core'));
}

/** Playwright's timeout (only Playwright's calls throw it, so it is loaded by then). */
function isPlaywrightTimeout(error: unknown): boolean {
  return playwright !== undefined && error instanceof playwright.errors.TimeoutError;
}

export class PlaywrightDriver implements BrowserDriver {
  private readonly bridge = new CdpBridge();
  private chromiumVersion: string | null = null;

  version(): string | null {
    return this.chromiumVersion;
  }

  async open(agent: GuestAgent, options: { viewport: Viewport; userAgent: string | null; fresh: boolean }): Promise<BrowserPage> {
    if (options.fresh) await restartNetworkService(agent);
    const registration = await this.bridge.register(() => agent.openTunnel(DEVTOOLS_PORT));
    let browser: Browser | undefined;
    try {
      browser = await (await loadPlaywright()).chromium.connectOverCDP(registration.wsUrl, { timeout: CONNECT_TIMEOUT_MS });
      this.chromiumVersion = browser.version();
      const context = browser.contexts()[0] ?? (await browser.newContext());
      const page = context.pages()[0] ?? (await context.newPage());
      await page.setViewportSize(options.viewport);
      if (options.userAgent) {
        const cdp = await context.newCDPSession(page);
        await cdp.send('Emulation.setUserAgentOverride', { userAgent: options.userAgent });
      }
      return new PlaywrightPage(browser, page, await context.newCDPSession(page), () => registration.dispose());
    } catch (error) {
      await browser?.close().catch(() => undefined);
      registration.dispose();
      throw translate(error);
    }
  }

  async warmUp(agent: GuestAgent): Promise<void> {
    const page = await this.open(agent, { viewport: { width: 1280, height: 720 }, userAgent: null, fresh: true });
    try {
      const timeoutMs = 120_000;
      // The first network request starts the (new) network service and runs the loading code once: a closed port
      // on the guest's loopback answers at once.
      // (Port 2: not on Chromium's list of restricted ports, so the request really goes out and is refused.)
      await page.navigate('http://127.0.0.1:2/', { timeoutMs, waitUntil: 'load' }).catch((error: unknown) => {
        if (!(error instanceof AppError && error.code === 'NAVIGATION_FAILED')) throw error;
      });
      await page.navigate('about:blank', { timeoutMs, waitUntil: 'load' });
      await page.setContent('<title>warm</title><h1>warm</h1><p>up <a href="#x">link</a></p><input id="i"><button id="b">b</button>', {
        timeoutMs,
        waitUntil: 'load',
      });
      await page.fill('#i', 'warm', { timeoutMs });
      await page.click('#b', { force: false, timeoutMs, button: 'left', clickCount: 1 });
      await page.content({ maxAnchors: 10, maxInteractive: 10, timeoutMs });
      await page.extract({ selector: 'h1', attributes: ['id'], maxElements: 5, timeoutMs });
      await page.screenshot({ fullPage: false, format: 'png', clip: null, quality: null, timeoutMs });
      await page.screenshot({ fullPage: true, format: 'jpeg', clip: null, quality: 80, timeoutMs });
      await page.navigate('about:blank', { timeoutMs, waitUntil: 'load' });
    } finally {
      await page.close();
    }
  }

  async close(): Promise<void> {
    await this.bridge.close();
  }
}

/** Kills Chromium's network service (Chromium starts a new one on the next request); none running is fine. */
async function restartNetworkService(agent: GuestAgent): Promise<void> {
  const stderr: Buffer[] = [];
  const result = await agent.exec(
    { argv: ['pkill', '-KILL', '-f', 'utility-sub-type=network.mojom.NetworkService'], env: {}, cwd: '/', timeoutMs: 15_000 },
    { onStdout: () => {}, onStderr: (chunk) => stderr.push(chunk) },
  );
  // pkill: 0 killed, 1 none matched; anything else is a failure worth knowing about.
  if (result.exitCode !== 0 && result.exitCode !== 1)
    throw new Error(`restarting the browser's network service failed: ${Buffer.concat(stderr).toString().trim()}`);
}

class PlaywrightPage implements BrowserPage {
  constructor(
    private readonly browser: Browser,
    private readonly page: Page,
    private readonly cdp: CDPSession,
    private readonly dispose: () => void,
  ) {}

  url(): string {
    return this.page.url();
  }

  onNavigated(listener: (url: string) => void): void {
    this.page.on('framenavigated', (frame) => {
      if (frame === this.page.mainFrame()) listener(frame.url());
    });
  }

  async navigate(url: string, options: { timeoutMs: number; waitUntil: WaitUntil }) {
    const deadline = Date.now() + options.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await this.page.goto(url, { timeout: timeout(deadline - Date.now()), waitUntil: options.waitUntil });
        return { url: this.page.url(), title: await this.page.title(), status: response?.status() ?? null };
      } catch (caught) {
        let error = caught;
        const interruption = error instanceof Error ? /is interrupted by another navigation to "([^"]*)"/.exec(error.message) : null;
        // Chromium restarted this very navigation (e.g. leaving an error page moves the page to another renderer
        // process): it goes on under a new id, so wait for it to load rather than call it failed.
        if (interruption && interruption[1] === url && Date.now() < deadline) {
          try {
            await this.page.waitForLoadState(options.waitUntil === 'commit' ? 'domcontentloaded' : options.waitUntil, {
              timeout: timeout(deadline - Date.now()),
            });
            return { url: this.page.url(), title: await this.page.title(), status: null };
          } catch (waitError) {
            error = waitError;
          }
        } else if (interruption && attempt === 1 && Date.now() < deadline) {
          // What an earlier navigation left (a page that never finished) committed and cut this one short: once, go again.
          continue;
        }
        // A page that did not load in time keeps loading: stop it, so it cannot interrupt what comes next.
        if (isPlaywrightTimeout(error)) await this.cdp.send('Page.stopLoading').catch(() => undefined);
        throw translate(error, { action: `navigating to ${url}` });
      }
    }
  }

  async setContent(html: string, options: { timeoutMs: number; waitUntil: WaitUntil }): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.page.setContent(html, { timeout: timeout(options.timeoutMs), waitUntil: options.waitUntil === 'commit' ? 'load' : options.waitUntil });
        return;
      } catch (error) {
        // A navigation still under way (an error page committing) replaced the document being written: once more.
        if (attempt === 1 && error instanceof Error && /Execution context was destroyed/.test(error.message)) {
          await this.page.waitForLoadState('load', { timeout: 30_000 }).catch(() => undefined);
          continue;
        }
        throw translate(error, { action: 'loading the HTML' });
      }
    }
  }

  click(selector: string, options: { force: boolean; timeoutMs: number; button: 'left' | 'right' | 'middle'; clickCount: number }) {
    return this.onElement(selector, 'clicking', () =>
      this.page
        .locator(selector)
        .first()
        .click({ force: options.force, timeout: timeout(options.timeoutMs), button: options.button, clickCount: options.clickCount }),
    );
  }

  type(selector: string, text: string, options: { delayMs: number; timeoutMs: number }) {
    return this.onElement(selector, 'typing into', () =>
      this.page
        .locator(selector)
        .first()
        .pressSequentially(text, { delay: options.delayMs, timeout: timeout(options.timeoutMs) }),
    );
  }

  fill(selector: string, value: string, options: { timeoutMs: number }) {
    return this.onElement(selector, 'filling', () =>
      this.page
        .locator(selector)
        .first()
        .fill(value, { timeout: timeout(options.timeoutMs) }),
    );
  }

  hover(selector: string, options: { timeoutMs: number }) {
    return this.onElement(selector, 'hovering', () =>
      this.page
        .locator(selector)
        .first()
        .hover({ timeout: timeout(options.timeoutMs) }),
    );
  }

  async keypress(key: string, options: { selector: string | null; timeoutMs: number }): Promise<void> {
    if (options.selector !== null) {
      await this.onElement(options.selector, `pressing ${key} in`, () =>
        this.page
          .locator(options.selector!)
          .first()
          .press(key, { timeout: timeout(options.timeoutMs) }),
      );
      return;
    }
    try {
      await this.page.keyboard.press(key);
    } catch (error) {
      throw translate(error, { action: `pressing ${key}` });
    }
  }

  async scroll(target: { selector: string } | { x: number; y: number }, options: { timeoutMs: number }): Promise<{ x: number; y: number }> {
    if ('selector' in target) {
      await this.onElement(target.selector, 'scrolling to', () =>
        this.page
          .locator(target.selector)
          .first()
          .scrollIntoViewIfNeeded({ timeout: timeout(options.timeoutMs) }),
      );
      return this.evaluate<{ x: number; y: number }>(call(SCROLL_POSITION_SCRIPT), 'reading the scroll position');
    }
    return this.evaluate<{ x: number; y: number }>(call(SCROLL_TO_SCRIPT, target), 'scrolling');
  }

  async wait(condition: WaitCondition, options: { selector: string | null; timeoutMs: number }): Promise<void> {
    const limit = timeout(options.timeoutMs);
    try {
      switch (condition) {
        case 'selector':
        case 'visible':
        case 'hidden':
        case 'attached':
        case 'detached':
          if (options.selector === null) throw new AppError('BAD_REQUEST', `the wait condition "${condition}" needs a selector`);
          await this.page.waitForSelector(options.selector, { state: ELEMENT_WAIT_STATES[condition], timeout: limit });
          return;
        case 'navigation':
          await this.page.waitForEvent('framenavigated', { predicate: (frame) => frame === this.page.mainFrame(), timeout: limit });
          await this.page.waitForLoadState('load', { timeout: limit });
          return;
        case 'load':
        case 'domcontentloaded':
        case 'networkidle':
          await this.page.waitForLoadState(condition, { timeout: limit });
          return;
        case 'timeout':
          await this.page.waitForTimeout(options.timeoutMs);
          return;
      }
    } catch (error) {
      throw translate(error, { action: `waiting for ${condition}${options.selector ? ` of ${options.selector}` : ''}` });
    }
  }

  async screenshot(options: ScreenshotOptions): Promise<Screenshot> {
    let bytes: Buffer;
    try {
      bytes = await this.page.screenshot({
        type: options.format,
        fullPage: options.fullPage,
        timeout: timeout(options.timeoutMs),
        ...(options.clip ? { clip: options.clip } : {}),
        ...(options.format === 'jpeg' && options.quality !== null ? { quality: options.quality } : {}),
      });
    } catch (error) {
      throw translate(error, { action: 'taking the screenshot' });
    }
    const size = imageSize(bytes);
    return { bytes, width: size.width, height: size.height };
  }

  async extract(options: { selector: string | null; attributes: string[]; maxElements: number; timeoutMs: number }): Promise<ExtractedElement[]> {
    return this.evaluate<ExtractedElement[]>(
      call(EXTRACT_SCRIPT, { selector: options.selector ?? 'body *', attributes: options.attributes, max: options.maxElements }),
      'extracting elements',
    );
  }

  content(options: { maxAnchors: number; maxInteractive: number; timeoutMs: number }): Promise<PageContent> {
    return this.evaluate<PageContent>(call(CONTENT_SCRIPT, { maxAnchors: options.maxAnchors, maxInteractive: options.maxInteractive }), 'reading the page');
  }

  async html(): Promise<string> {
    try {
      return await this.page.content();
    } catch (error) {
      throw translate(error, { action: 'reading the HTML' });
    }
  }

  async title(): Promise<string> {
    try {
      return await this.page.title();
    } catch (error) {
      throw translate(error, { action: 'reading the title' });
    }
  }

  /** The page's text (render's `return_text`). */
  text(): Promise<string> {
    return this.evaluate<string>(call(TEXT_SCRIPT), 'reading the text');
  }

  async close(): Promise<void> {
    await this.cdp.detach().catch(() => undefined);
    // For a browser reached over CDP this disconnects; the browser and its default context stay (the VM is killed).
    await this.browser.close().catch(() => undefined);
    this.dispose();
  }

  private async evaluate<T>(expression: string, action: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.page.evaluate(expression)) as T;
      } catch (error) {
        // The page navigated while the script ran (a link, a redirect, a navigation Chromium restarted): once the
        // new document is there, read that one.
        if (
          attempt === 1 &&
          error instanceof Error &&
          /Execution context was destroyed|Cannot find context with specified id|navigation/i.test(error.message)
        ) {
          await this.page.waitForLoadState('domcontentloaded', { timeout: 30_000 }).catch(() => undefined);
          continue;
        }
        throw translate(error, { action });
      }
    }
  }

  /**
   * Runs an action on `selector`'s first match. A timeout is ELEMENT_NOT_FOUND when nothing matches the selector
   * by then, BROWSER_TIMEOUT when something does but never became actionable (hidden, disabled, covered).
   */
  private async onElement(selector: string, action: string, run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      if (isPlaywrightTimeout(error)) {
        const count = await this.page
          .locator(selector)
          .count()
          .catch(() => 0);
        if (count === 0) throw new AppError('ELEMENT_NOT_FOUND', `no element matches the selector ${selector}`, {}, { selector });
      }
      throw translate(error, { action: `${action} ${selector}`, selector });
    }
  }
}

/** Playwright takes 0 as "no timeout"; the API's 0 means "do not wait". */
function timeout(ms: number): number {
  return Math.max(1, ms);
}

/** Playwright's errors in the API's terms; anything unrecognised passes through (a 500 with the request id). */
function translate(error: unknown, context: { action?: string; selector?: string } = {}): unknown {
  if (error instanceof AppError) return error;
  if (!(error instanceof Error)) return error;
  const message = error.message.split('\n')[0]!.replace(/^[a-zA-Z.]+: /, '');
  const doing = context.action ? ` while ${context.action}` : '';
  if (isPlaywrightTimeout(error))
    return new AppError('BROWSER_TIMEOUT', `timed out${doing}: ${message}`, {}, context.selector ? { selector: context.selector } : {});
  if (/net::ERR_|Cannot navigate to invalid URL|Protocol error \(Page\.navigate\)|invalid URL/i.test(message)) {
    return new AppError('NAVIGATION_FAILED', `the page could not be loaded${doing}: ${message}`);
  }
  if (/is not a valid selector|Unexpected token|Failed to execute 'querySelector|SyntaxError|Unknown engine|Unknown key|Unsupported token/i.test(message)) {
    return new AppError('BAD_REQUEST', `${message}${doing}`);
  }
  if (/has been closed|Target closed|Browser closed|WebSocket|ECONNRESET|socket hang up/i.test(message)) {
    return new AppError('VM_AGENT_UNAVAILABLE', `the connection to the session's browser was lost${doing}: ${message}`);
  }
  return error;
}
