/**
 * The interactions with a session's page: each runs in the session's queue (`BrowserSessions.run`), the page
 * actions through the same code a render's actions run (`page-actions.ts`), and screenshots, extraction and
 * content with answers of their own. `fill-credential` is the credentials' (`credentials.ts`).
 */
import type * as Wire from '../../contract/browser/index.ts';
import { DEFAULT_TIMEOUT_MS } from '../../contract/browser/index.ts';
import type { Principal } from '../authenticator.ts';
import type { PageContent, Screenshot } from './browser-driver.ts';
import { clickPage, fillPage, hoverPage, keypressPage, navigatePage, scrollPage, typePage, waitOnPage } from './page-actions.ts';
import type { BrowserSessions } from './sessions.ts';
import { secondsSince } from './timing.ts';

/** Most interactive elements `content` lists. */
const MAX_INTERACTIVE = 200;

export class BrowserInteractions {
  constructor(private readonly sessions: BrowserSessions) {}

  navigate(principal: Principal, request: Wire.BrowserNavigateRequest): Promise<Wire.BrowserInteractionResponse> {
    return this.sessions.interact(principal, request.session_id, (page) => navigatePage(page, request));
  }

  click(principal: Principal, request: Wire.BrowserClickRequest): Promise<Wire.BrowserInteractionResponse> {
    return this.sessions.interact(principal, request.session_id, (page) => clickPage(page, request));
  }

  type(principal: Principal, request: Wire.BrowserTypeRequest): Promise<Wire.BrowserInteractionResponse> {
    return this.sessions.interact(principal, request.session_id, (page) => typePage(page, request));
  }

  fill(principal: Principal, request: Wire.BrowserFillRequest): Promise<Wire.BrowserInteractionResponse> {
    return this.sessions.interact(principal, request.session_id, (page) => fillPage(page, request));
  }

  scroll(principal: Principal, request: Wire.BrowserScrollRequest): Promise<Wire.BrowserInteractionResponse> {
    return this.sessions.interact(principal, request.session_id, (page) => scrollPage(page, request));
  }

  wait(principal: Principal, request: Wire.BrowserWaitRequest): Promise<Wire.BrowserInteractionResponse> {
    return this.sessions.interact(principal, request.session_id, (page) => waitOnPage(page, request));
  }

  hover(principal: Principal, request: Wire.BrowserTargetRequest): Promise<Wire.BrowserInteractionResponse> {
    return this.sessions.interact(principal, request.session_id, (page) => hoverPage(page, request));
  }

  keypress(principal: Principal, request: Wire.BrowserKeyPressRequest): Promise<Wire.BrowserInteractionResponse> {
    return this.sessions.interact(principal, request.session_id, (page) => keypressPage(page, request));
  }

  async screenshot(principal: Principal, request: Wire.BrowserScreenshotRequest): Promise<Wire.BrowserScreenshotResponse> {
    const format = request.format ?? 'png';
    const started = performance.now();
    let shot: Screenshot | undefined;
    const live = await this.sessions.run(principal, request.session_id, async (session) => {
      shot = await session.page.screenshot({
        fullPage: request.full_page ?? false,
        format,
        clip: request.clip ?? null,
        quality: request.quality ?? null,
        timeoutMs: DEFAULT_TIMEOUT_MS,
      });
      session.screenshots += 1;
    });
    return {
      screenshot: shot!.bytes.toString('base64'),
      format,
      width: shot!.width,
      height: shot!.height,
      execution_time: secondsSince(started),
      session_id: request.session_id,
      usage_info: this.sessions.usageInfo(live),
    };
  }

  async extract(principal: Principal, request: Wire.BrowserExtractRequest): Promise<Wire.BrowserExtractResponse> {
    const started = performance.now();
    let elements: Wire.ExtractedElement[] = [];
    await this.sessions.run(principal, request.session_id, async (session) => {
      elements = await session.page.extract({
        selector: request.selector ?? null,
        attributes: request.attributes ?? [],
        maxElements: request.max_elements ?? 100,
        timeoutMs: DEFAULT_TIMEOUT_MS,
      });
    });
    return { elements, count: elements.length, execution_time: secondsSince(started), session_id: request.session_id };
  }

  async content(principal: Principal, request: Wire.BrowserContentRequest): Promise<Wire.BrowserContentResponse> {
    const started = performance.now();
    let content: PageContent | undefined;
    let extractionTime = 0;
    const live = await this.sessions.run(principal, request.session_id, async (session) => {
      const extracting = performance.now();
      content = await session.page.content({
        maxAnchors: request.include_anchors === false ? 0 : (request.max_anchors ?? 50),
        maxInteractive: request.include_interactive === false ? 0 : MAX_INTERACTIVE,
        timeoutMs: DEFAULT_TIMEOUT_MS,
      });
      extractionTime = secondsSince(extracting);
    });
    return {
      success: true,
      readable_content: content!.readable,
      interactive_elements: content!.interactive,
      content_anchors: content!.anchors,
      title: content!.title,
      url: live.page.url(),
      extraction_time: extractionTime,
      execution_time: secondsSince(started),
      session_id: request.session_id,
      usage_info: this.sessions.usageInfo(live),
    };
  }
}
