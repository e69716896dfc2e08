/**
 * The options and small types of the browser calls (`browser.ts`): what a session, an interaction, a render and a
 * stored credential take. Every interaction's options take `signal` (`CallOptions`); timeouts are milliseconds, as
 * the server takes them.
 */
import type { BrowserRenderActionInput, JsonBody } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';

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

export interface BrowserSessionCreateOptions extends CallOptions {
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

export interface NavigateOptions extends CallOptions {
  /** Milliseconds to wait for the page (default 30000, at most 120000). */
  waitTimeout?: number;
  /** When the page counts as loaded (default `load`). */
  waitUntil?: WaitUntil;
}

export interface ElementOptions extends CallOptions {
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

export interface ScreenshotOptions extends CallOptions {
  /** The whole page instead of the viewport. */
  fullPage?: boolean;
  format?: ScreenshotFormat;
  clip?: Clip;
  /** JPEG quality, 0 to 100. */
  quality?: number;
}

export interface ExtractOptions extends CallOptions {
  /** Default `body *`. */
  selector?: string;
  /** Attributes to read besides text and tag. */
  attributes?: string[];
  /** Default 100, at most 1000. */
  maxElements?: number;
}

export interface ContentOptions extends CallOptions {
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
