/**
 * What the browser service needs from the code that drives Chromium (`src/browser/`, Playwright over CDP through
 * the agent's tunnel), so the core never depends on Playwright. Every method rejects with an AppError the API can
 * answer: ELEMENT_NOT_FOUND (with the selector), BROWSER_TIMEOUT, NAVIGATION_FAILED, BAD_REQUEST (a selector that
 * does not parse), VM_AGENT_UNAVAILABLE (the browser connection dropped).
 */
import type {
  ContentAnchor,
  ExtractedElement,
  InteractiveElement,
  ReadableContent,
  ScreenshotFormat,
  WaitCondition,
  WaitUntil,
} from '../../contract/browser/index.ts';
import type { GuestAgent } from '../vm-engine.ts';

export interface Viewport {
  width: number;
  height: number;
}

export interface ScreenshotOptions {
  fullPage: boolean;
  format: ScreenshotFormat;
  clip: { x: number; y: number; width: number; height: number } | null;
  quality: number | null;
  timeoutMs: number;
}

export interface Screenshot {
  bytes: Buffer;
  width: number;
  height: number;
}

/** The page as `content` reads it (`src/browser/page-scripts.ts`'s CONTENT_SCRIPT). */
export interface PageContent {
  /** The document's title. */
  title: string;
  /** Readability's article, else the page's visible text (`extractor` says which). */
  readable: ReadableContent;
  interactive: InteractiveElement[];
  anchors: ContentAnchor[];
}

/** The one page of a browser session (its VM's browser, its own context). */
export interface BrowserPage {
  /** The page's URL now. */
  url(): string;
  navigate(url: string, options: { timeoutMs: number; waitUntil: WaitUntil }): Promise<{ url: string; title: string; status: number | null }>;
  setContent(html: string, options: { timeoutMs: number; waitUntil: WaitUntil }): Promise<void>;
  click(selector: string, options: { force: boolean; timeoutMs: number; button: 'left' | 'right' | 'middle'; clickCount: number }): Promise<void>;
  type(selector: string, text: string, options: { delayMs: number; timeoutMs: number }): Promise<void>;
  fill(selector: string, value: string, options: { timeoutMs: number }): Promise<void>;
  /** Scrolls an element into view, or the page to absolute x/y; answers the page's scroll position after. */
  scroll(target: { selector: string } | { x: number; y: number }, options: { timeoutMs: number }): Promise<{ x: number; y: number }>;
  wait(condition: WaitCondition, options: { selector: string | null; timeoutMs: number }): Promise<void>;
  hover(selector: string, options: { timeoutMs: number }): Promise<void>;
  keypress(key: string, options: { selector: string | null; timeoutMs: number }): Promise<void>;
  screenshot(options: ScreenshotOptions): Promise<Screenshot>;
  extract(options: { selector: string | null; attributes: string[]; maxElements: number; timeoutMs: number }): Promise<ExtractedElement[]>;
  /** The page for a language model; 0 for `maxAnchors` or `maxInteractive` skips that list. */
  content(options: { maxAnchors: number; maxInteractive: number; timeoutMs: number }): Promise<PageContent>;
  html(): Promise<string>;
  /** The page's readable text (`innerText` of the body). */
  text(): Promise<string>;
  title(): Promise<string>;
  /** Counts main-frame navigations (for usage). */
  onNavigated(listener: (url: string) => void): void;
  /** Ends the connection to the browser (the VM goes on until it is killed). */
  close(): Promise<void>;
}

export interface BrowserDriver {
  /**
   * Connects to the browser of a VM started from the browser template and readies its page for one user. `fresh`:
   * the VM comes straight from a restore (not from the pool, whose warm-up did the per-VM preparation already).
   */
  open(agent: GuestAgent, options: { viewport: Viewport; userAgent: string | null; fresh: boolean }): Promise<BrowserPage>;
  /**
   * Prepares a restored VM for the pool: what `open` does for a fresh VM, then a first page load, network request,
   * screenshot and form fill, so its first user does not pay for them.
   */
  warmUp(agent: GuestAgent): Promise<void>;
  /** Chromium's version, once a browser was reached (null before). */
  version(): string | null;
  close(): Promise<void>;
}
