/**
 * The interactions with a browser session's page on the wire: each request is the session id plus the fields of
 * one page action (`*_FIELDS`, which a render's actions take too: `renders.ts`), and what each answers. The rules
 * across fields that a schema cannot state are `pageActionProblems`, applied by every route that takes an action.
 */
import { Type, type Static } from 'typebox';
import { StringEnum, StringOrNull, type FieldProblem } from '../kit.ts';
import {
  ClipField,
  DEFAULT_TIMEOUT_MS,
  Format,
  MAX_TEXT_CHARS,
  MAX_TIMEOUT_MS,
  OptionalSelector,
  Quality,
  SCREENSHOT_FORMATS,
  Selector,
  SessionId,
  TimeoutMs,
  Url,
  UsageInfo,
  WAIT_CONDITIONS,
  WaitUntilField,
  isElementWait,
  type WaitCondition,
} from './common.ts';

/** The interactions served, by their path's last segment (`POST /v1/browser/interactions/{name}`). */
export const BROWSER_INTERACTIONS = [
  'navigate',
  'click',
  'type',
  'fill',
  'scroll',
  'wait',
  'hover',
  'keypress',
  'screenshot',
  'extract',
  'content',
  'fill-credential',
] as const;
export type BrowserInteractionName = (typeof BROWSER_INTERACTIONS)[number];

// ---- The fields of each page action (an interaction's request without its session id) ----

export const NAVIGATE_FIELDS = {
  url: Url('Where to go: http, https, data or about URLs'),
  wait_timeout: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_TIMEOUT_MS,
      default: DEFAULT_TIMEOUT_MS,
      description: `Milliseconds to wait for the page to load (0 to ${MAX_TIMEOUT_MS}, default ${DEFAULT_TIMEOUT_MS}); past it, 408 BROWSER_TIMEOUT`,
    }),
  ),
  wait_until: Type.Optional(WaitUntilField),
};

export const CLICK_FIELDS = {
  selector: Selector('CSS selector (or a Playwright selector such as `text=Sign in`) of the element to click'),
  force: Type.Optional(Type.Boolean({ default: false, description: 'Click even if the element is covered, hidden or disabled (default false)' })),
  timeout: TimeoutMs('for the element to be clickable'),
  button: Type.Optional(StringEnum(['left', 'right', 'middle'] as const, { default: 'left', description: 'Mouse button (default left)' })),
  click_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, default: 1, description: '1 (default), 2 for a double click, 3 for a triple click' })),
};

/** `delayDefault`: a session's typing is paced like a user's; a render's, which nobody watches, is not. */
export const typeFields = (delayDefault: number) => ({
  selector: Selector('The element to type into (it is focused first)'),
  text: Type.String({
    maxLength: MAX_TEXT_CHARS,
    description: `Typed key by key, as a user would (at most ${MAX_TEXT_CHARS} characters); \`fill\` sets a value at once`,
  }),
  delay: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 1000, default: delayDefault, description: `Milliseconds between key presses (0 to 1000, default ${delayDefault})` }),
  ),
  timeout: TimeoutMs('for the element'),
});

export const FILL_FIELDS = {
  selector: Selector('An input, textarea, select or contenteditable element'),
  value: Type.String({ maxLength: MAX_TEXT_CHARS, description: `The value it gets, replacing what it had (at most ${MAX_TEXT_CHARS} characters)` }),
  timeout: TimeoutMs('for the element'),
};

export const SCROLL_FIELDS = {
  selector: OptionalSelector('Scroll this element into view'),
  x: Type.Optional(
    Type.Union([Type.Integer({ minimum: 0, maximum: 10_000_000 }), Type.Null()], {
      description: 'Scroll the page to this horizontal position, pixels (absolute)',
    }),
  ),
  y: Type.Optional(
    Type.Union([Type.Integer({ minimum: 0, maximum: 10_000_000 }), Type.Null()], {
      description: 'Scroll the page to this vertical position, pixels (absolute)',
    }),
  ),
};

export const WAIT_FIELDS = {
  condition: StringEnum(WAIT_CONDITIONS, {
    description:
      "Playwright's element states, each needing `selector`: `visible` (or `selector`: the element is visible), `hidden` (it is hidden or gone), `attached` (it is in the page), `detached` (it is not); the load states `navigation` or `load` (the load event), `domcontentloaded`, `networkidle`; or `timeout` (just wait `timeout` milliseconds)",
  }),
  selector: OptionalSelector('The element of the element-state conditions (`visible`, `selector`, `hidden`, `attached`, `detached`)'),
  timeout: TimeoutMs('for the condition (for `timeout`: how long to wait)'),
};

export const HOVER_FIELDS = {
  selector: Selector('The element'),
  timeout: TimeoutMs('for the element'),
};

export const KEYPRESS_FIELDS = {
  key: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'A key name as Playwright names them: `Enter`, `Tab`, `ArrowDown`, `a`, or a chord such as `Control+A`',
  }),
  selector: OptionalSelector('Press it in this element (default: the focused element)'),
  timeout: TimeoutMs('for the element'),
};

// ---- Interaction requests ----

export const BrowserNavigateRequest = Type.Object(
  { session_id: SessionId, ...NAVIGATE_FIELDS },
  { $id: 'BrowserNavigateRequest', title: 'BrowserNavigateRequest' },
);
export type BrowserNavigateRequest = Static<typeof BrowserNavigateRequest>;

export const BrowserClickRequest = Type.Object({ session_id: SessionId, ...CLICK_FIELDS }, { $id: 'BrowserClickRequest', title: 'BrowserClickRequest' });
export type BrowserClickRequest = Static<typeof BrowserClickRequest>;

export const BrowserTypeRequest = Type.Object({ session_id: SessionId, ...typeFields(100) }, { $id: 'BrowserTypeRequest', title: 'BrowserTypeRequest' });
export type BrowserTypeRequest = Static<typeof BrowserTypeRequest>;

export const BrowserFillRequest = Type.Object({ session_id: SessionId, ...FILL_FIELDS }, { $id: 'BrowserFillRequest', title: 'BrowserFillRequest' });
export type BrowserFillRequest = Static<typeof BrowserFillRequest>;

export const BrowserScrollRequest = Type.Object(
  { session_id: SessionId, ...SCROLL_FIELDS },
  { $id: 'BrowserScrollRequest', title: 'BrowserScrollRequest', description: 'Give `selector`, or `x` and/or `y`: a body with neither is a 422' },
);
export type BrowserScrollRequest = Static<typeof BrowserScrollRequest>;

export const BrowserWaitRequest = Type.Object({ session_id: SessionId, ...WAIT_FIELDS }, { $id: 'BrowserWaitRequest', title: 'BrowserWaitRequest' });
export type BrowserWaitRequest = Static<typeof BrowserWaitRequest>;

/** hover (and any interaction that needs only an element). */
export const BrowserTargetRequest = Type.Object({ session_id: SessionId, ...HOVER_FIELDS }, { $id: 'BrowserTargetRequest', title: 'BrowserTargetRequest' });
export type BrowserTargetRequest = Static<typeof BrowserTargetRequest>;

export const BrowserKeyPressRequest = Type.Object(
  { session_id: SessionId, ...KEYPRESS_FIELDS },
  { $id: 'BrowserKeyPressRequest', title: 'BrowserKeyPressRequest' },
);
export type BrowserKeyPressRequest = Static<typeof BrowserKeyPressRequest>;

export const BrowserScreenshotRequest = Type.Object(
  {
    session_id: SessionId,
    full_page: Type.Optional(Type.Boolean({ default: false, description: 'The whole scrollable page instead of the viewport (default false)' })),
    format: Type.Optional(Format),
    clip: ClipField,
    quality: Quality,
  },
  { $id: 'BrowserScreenshotRequest', title: 'BrowserScreenshotRequest' },
);
export type BrowserScreenshotRequest = Static<typeof BrowserScreenshotRequest>;

export const BrowserExtractRequest = Type.Object(
  {
    session_id: SessionId,
    selector: OptionalSelector('The elements to read (default `body *`)'),
    attributes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
        maxItems: 50,
        description: 'Attributes to read from each element besides its text and tag, e.g. `["href", "class"]` (at most 50)',
      }),
    ),
    max_elements: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'At most this many elements, in document order (1 to 1000, default 100)' }),
    ),
  },
  { $id: 'BrowserExtractRequest', title: 'BrowserExtractRequest' },
);
export type BrowserExtractRequest = Static<typeof BrowserExtractRequest>;

export const BrowserContentRequest = Type.Object(
  {
    session_id: SessionId,
    include_interactive: Type.Optional(Type.Boolean({ default: true, description: 'List the links, buttons and form fields (default true)' })),
    include_anchors: Type.Optional(Type.Boolean({ default: true, description: 'List text anchors with selectors to reach them (default true)' })),
    max_anchors: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 50, description: 'At most this many anchors (0 to 1000, default 50)' })),
  },
  { $id: 'BrowserContentRequest', title: 'BrowserContentRequest' },
);
export type BrowserContentRequest = Static<typeof BrowserContentRequest>;

export const BrowserFillCredentialRequest = Type.Object(
  {
    session_id: SessionId,
    credential_id: Type.String({ minLength: 1, maxLength: 64, description: "A stored credential (`POST /v1/browser/credentials`) allowed on the page's host" }),
    username_selector: OptionalSelector('The username field (default: the first `input[type=email]`, `input[name*=user]` or text input of the page)'),
    password_selector: OptionalSelector('The password field (default: the first `input[type=password]`)'),
    submit: Type.Optional(Type.Boolean({ default: false, description: 'Press Enter in the password field after filling (default false)' })),
    timeout: TimeoutMs('for the fields'),
  },
  { $id: 'BrowserFillCredentialRequest', title: 'BrowserFillCredentialRequest' },
);
export type BrowserFillCredentialRequest = Static<typeof BrowserFillCredentialRequest>;

// ---- Interaction answers ----

export const BrowserInteractionResponse = Type.Object(
  {
    success: Type.Boolean(),
    message: Type.String(),
    execution_time: Type.Number({ description: 'Seconds the interaction took' }),
    session_id: Type.String(),
    data: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'What the interaction found or did, e.g. `{url, title}` after navigate, `{x, y}` after scroll',
    }),
  },
  { $id: 'BrowserInteractionResponse', title: 'BrowserInteractionResponse' },
);
export type BrowserInteractionResponse = Static<typeof BrowserInteractionResponse>;

export const BrowserScreenshotResponse = Type.Object(
  {
    screenshot: Type.String({ description: 'The image, base64' }),
    format: StringEnum(SCREENSHOT_FORMATS),
    width: Type.Integer({ description: 'Image width, pixels' }),
    height: Type.Integer({ description: 'Image height, pixels' }),
    execution_time: Type.Number({ description: 'Seconds' }),
    session_id: Type.String(),
    usage_info: UsageInfo,
  },
  { $id: 'BrowserScreenshotResponse', title: 'BrowserScreenshotResponse' },
);
export type BrowserScreenshotResponse = Static<typeof BrowserScreenshotResponse>;

export const ExtractedElement = Type.Object({
  tag: Type.String(),
  text: Type.String(),
  attributes: Type.Record(Type.String(), StringOrNull, { description: 'The attributes asked for; null where the element has none of that name' }),
  selector: Type.String({ description: 'A CSS selector that finds this element again' }),
  visible: Type.Boolean(),
  value: Type.Union([Type.String(), Type.Null()], { description: 'The value of a form control (input, textarea, select), else null' }),
});
export type ExtractedElement = Static<typeof ExtractedElement>;

export const BrowserExtractResponse = Type.Object(
  {
    elements: Type.Array(ExtractedElement),
    count: Type.Integer(),
    execution_time: Type.Number({ description: 'Seconds' }),
    session_id: Type.String(),
  },
  { $id: 'BrowserExtractResponse', title: 'BrowserExtractResponse' },
);
export type BrowserExtractResponse = Static<typeof BrowserExtractResponse>;

const nullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const ElementPosition = Type.Object(
  {
    x: Type.Integer({ description: 'Left edge, CSS pixels from the left of the page' }),
    y: Type.Integer({ description: 'Top edge, CSS pixels from the top of the page (not of the viewport: scrolling does not change it)' }),
    width: Type.Integer({ description: 'CSS pixels' }),
    height: Type.Integer({ description: 'CSS pixels' }),
  },
  { description: "The element's box as laid out when the page was read, in the coordinates of a `full_page` screenshot" },
);
export type ElementPosition = Static<typeof ElementPosition>;

export const InteractiveElement = Type.Object({
  type: Type.String({ description: '`link`, `input`, else its ARIA role or its tag (`button`, `textarea`, `select`, …); `interactive_type` is finer' }),
  interactive_type: Type.String({
    description:
      'What the user does with it: `link`, `button` (also a submit, reset or image input), `input`, `checkbox`, `radio`, `textarea`, `select`, another ARIA role it has (`tab`, `menuitem`, …), `editable` (contenteditable) or `clickable` (an onclick handler)',
  }),
  tag: Type.String({ description: 'Its element name: `a`, `button`, `input`, …' }),
  text: Type.String({ description: 'Its text, else its value, aria-label or placeholder (at most 200 characters)' }),
  selector: Type.String({ description: 'A CSS selector that finds it again (for click, fill, type)' }),
  attributes: Type.Record(Type.String(), Type.String(), {
    description: 'Those it has of name, type, placeholder, href, aria-label and role; the current value of a form field',
  }),
  position: ElementPosition,
});
export type InteractiveElement = Static<typeof InteractiveElement>;

export const ContentAnchor = Type.Object({
  text: Type.String({ description: "The block's or link's text, whitespace collapsed: its first 200 characters (`length` counts them all)" }),
  selector: Type.String({ description: 'A CSS selector that finds the element again (for click, scroll, extract)' }),
  href: nullableText("A link's absolute URL; null for a text block"),
  length: Type.Integer({ description: 'Characters of the whole text' }),
  tag: Type.String({ description: '`a` for a link; for a text block its element: `h1`–`h6`, `p`, `li`, `blockquote`, `pre`, `td`, `div`, …' }),
});
export type ContentAnchor = Static<typeof ContentAnchor>;

export const CONTENT_EXTRACTORS = ['readability', 'page_text'] as const;

export const ReadableContent = Type.Object(
  {
    title: Type.String({ description: "The article's title as Readability finds it (the page's title, less a site name); else the page's title" }),
    byline: nullableText("The article's author line (`By Ada Lovelace`), from the page's metadata or its text; null when none is found"),
    excerpt: nullableText("The article's summary: the page's description metadata, else its first paragraph"),
    site_name: nullableText("The site's name, from the page's metadata"),
    published_time: nullableText("When the article was published, as the page's metadata states it"),
    content: Type.String({
      description: 'The readable text: blocks on lines of their own, a blank line after paragraphs, headings and lists, no markup',
    }),
    word_count: Type.Integer({ description: 'Words of `content` (runs of characters between spaces)' }),
    length: Type.Integer({ description: 'Characters of `content`' }),
    extractor: StringEnum(CONTENT_EXTRACTORS, {
      description:
        "`readability`: the page reads as an article and `content` is that article, as Mozilla's Readability (Firefox's Reader View) finds it: navigation, headers and footers, ads, cookie banners, comments and sidebars left out. `page_text`: the page is no article (a form, a list of links, an app) or Readability found none, and `content` is all of the page's visible text; byline, excerpt, site name and published time are then null",
    }),
  },
  { description: "The page's main text, cleaned of clutter when the page is an article (`extractor` says how it was read)" },
);
export type ReadableContent = Static<typeof ReadableContent>;

export const BrowserContentResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'Always true (a failure is an error status)' }),
    readable_content: ReadableContent,
    interactive_elements: Type.Array(InteractiveElement, {
      description:
        'The visible links, buttons, form fields and other clickable elements, in document order (at most 200; empty when `include_interactive` is false)',
    }),
    content_anchors: Type.Array(ContentAnchor, {
      description:
        'Text mapped to selectors: the text blocks (headings, paragraphs, list items, …) and links of the readable part (the article, else the whole page) in document order, then the other links of the page, at most `max_anchors` (empty when `include_anchors` is false)',
    }),
    title: Type.String({ description: "The page's title (`readable_content.title` is the article's)" }),
    url: Type.String(),
    extraction_time: Type.Number({ description: 'Seconds spent reading the page' }),
    execution_time: Type.Number({ description: 'Seconds the interaction took, waiting for the session included' }),
    session_id: Type.String(),
    usage_info: UsageInfo,
  },
  { $id: 'BrowserContentResponse', title: 'BrowserContentResponse' },
);
export type BrowserContentResponse = Static<typeof BrowserContentResponse>;

// ---- Rules across fields ----

const given = (value: unknown) => value !== undefined && value !== null;

/**
 * What is wrong with a page action's fields beyond what its schema says (`loc`: where the fields are): a scroll
 * needs a selector or a position, and the `selector` and `hidden` waits need a selector. Empty when nothing is.
 */
export function pageActionProblems(action: string, fields: Record<string, unknown>, loc: (string | number)[]): FieldProblem[] {
  if (action === 'scroll' && !given(fields.selector) && !given(fields.x) && !given(fields.y)) {
    return [{ loc, msg: 'Give selector (scroll it into view) or x and/or y (scroll the page there)', type: 'value_error' }];
  }
  const condition = fields.condition as WaitCondition | undefined;
  if (action === 'wait' && isElementWait(condition) && !given(fields.selector)) {
    return [{ loc: [...loc, 'selector'], msg: `Field required when condition is "${condition}"`, type: 'missing' }];
  }
  return [];
}
