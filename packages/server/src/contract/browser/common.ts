/**
 * Pieces of the browser's wire shapes that several operations share: limits, the closed lists (formats, load
 * states, wait conditions, statuses), and field schemas with their bounds, defaults and descriptions.
 *
 * Units: timeouts and delays are milliseconds; `execution_time`, `session_seconds`, `duration_seconds` and
 * `total_seconds` are seconds; sizes and positions are CSS pixels.
 */
import { Type, type Static } from 'typebox';
import { StringEnum } from '../kit.ts';

export const MAX_URL_CHARS = 8192;
export const MAX_SELECTOR_CHARS = 2000;
export const MAX_TEXT_CHARS = 100_000;
/** Inline HTML of a render; the whole body is also bounded by SANDBOXD_BODY_LIMIT_BYTES (10 MiB by default). */
export const MAX_HTML_CHARS = 5 * 1024 * 1024;
export const MAX_TIMEOUT_MS = 120_000;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const VIEWPORT = { minWidth: 100, maxWidth: 3840, minHeight: 100, maxHeight: 2160, defaultWidth: 1280, defaultHeight: 720 } as const;

export const SCREENSHOT_FORMATS = ['png', 'jpeg'] as const;
export type ScreenshotFormat = (typeof SCREENSHOT_FORMATS)[number];
export const WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle', 'commit'] as const;
export type WaitUntil = (typeof WAIT_UNTIL)[number];
export const WAIT_CONDITIONS = [
  'selector',
  'visible',
  'hidden',
  'attached',
  'detached',
  'navigation',
  'load',
  'domcontentloaded',
  'networkidle',
  'timeout',
] as const;
export type WaitCondition = (typeof WAIT_CONDITIONS)[number];

/**
 * The conditions that wait for an element (`selector`), by the state they wait for: Playwright's element states, as
 * the published InstaVM client sends them (`wait_for("visible", "body")`); `selector` is `visible` by its older name.
 */
export const ELEMENT_WAIT_STATES = { selector: 'visible', visible: 'visible', hidden: 'hidden', attached: 'attached', detached: 'detached' } as const;
export type ElementWaitCondition = keyof typeof ELEMENT_WAIT_STATES;
export const isElementWait = (condition: string | undefined): condition is ElementWaitCondition =>
  condition !== undefined && Object.hasOwn(ELEMENT_WAIT_STATES, condition);
/** States of a browser session: `active` until closed by its owner, its idle timeout, its lifetime, or its VM ending. */
export const SESSION_STATUSES = ['active', 'closed', 'expired', 'failed'] as const;
export type BrowserSessionStatus = (typeof SESSION_STATUSES)[number];

export const SessionId = Type.String({ minLength: 1, maxLength: 128, description: 'The browser session (from `POST /v1/browser/sessions/`)' });
export const Selector = (description: string) => Type.String({ minLength: 1, maxLength: MAX_SELECTOR_CHARS, description });
export const OptionalSelector = (description: string) => Type.Optional(Type.Union([Selector(description), Type.Null()]));
export const TimeoutMs = (what: string) =>
  Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_TIMEOUT_MS,
      default: DEFAULT_TIMEOUT_MS,
      description: `Milliseconds to wait ${what} (0 to ${MAX_TIMEOUT_MS}, default ${DEFAULT_TIMEOUT_MS})`,
    }),
  );
export const Url = (description: string) => Type.String({ minLength: 1, maxLength: MAX_URL_CHARS, description });
export const UserAgent = Type.Optional(
  Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Null()], {
    description: "The User-Agent header and navigator.userAgent (default: the browser's own)",
  }),
);
export const Width = Type.Integer({
  minimum: VIEWPORT.minWidth,
  maximum: VIEWPORT.maxWidth,
  default: VIEWPORT.defaultWidth,
  description: `Viewport width, pixels (${VIEWPORT.minWidth} to ${VIEWPORT.maxWidth}, default ${VIEWPORT.defaultWidth})`,
});
export const Height = Type.Integer({
  minimum: VIEWPORT.minHeight,
  maximum: VIEWPORT.maxHeight,
  default: VIEWPORT.defaultHeight,
  description: `Viewport height, pixels (${VIEWPORT.minHeight} to ${VIEWPORT.maxHeight}, default ${VIEWPORT.defaultHeight})`,
});
export const WaitUntilField = StringEnum(WAIT_UNTIL, {
  default: 'load',
  description: 'When a page counts as loaded: `load` (default), `domcontentloaded`, `networkidle` (no requests for 500 ms) or `commit` (the response arrived)',
});
export const Format = StringEnum(SCREENSHOT_FORMATS, { default: 'png', description: 'Image format: `png` (default) or `jpeg`' });
export const Quality = Type.Optional(
  Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()], {
    description: "JPEG quality, 0 to 100 (jpeg only; the browser's default when absent)",
  }),
);
export const ApiKeyField = Type.Optional(Type.String({ description: 'The API key, for clients that send it in the body (a header works too)' }));

export const Clip = Type.Object(
  {
    x: Type.Number({ minimum: 0, maximum: 100_000 }),
    y: Type.Number({ minimum: 0, maximum: 1_000_000 }),
    width: Type.Number({ minimum: 1, maximum: 16_384 }),
    height: Type.Number({ minimum: 1, maximum: 16_384 }),
  },
  { description: 'The part of the page to capture, pixels from the top left of the page' },
);
export type Clip = Static<typeof Clip>;
export const ClipField = Type.Optional(Type.Union([Clip, Type.Null()]));

export const UsageInfo = Type.Object(
  {
    pages_visited: Type.Integer({ description: 'Navigations of the session so far' }),
    screenshots_taken: Type.Integer(),
    session_seconds: Type.Number({ description: 'Seconds since the session was created' }),
  },
  { description: 'What the session has used so far' },
);
export type UsageInfo = Static<typeof UsageInfo>;
