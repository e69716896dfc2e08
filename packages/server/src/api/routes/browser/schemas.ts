/**
 * Schemas of the browser operations: the wire shapes of `core/browser/browser-api.ts` (snake_case, as the published
 * clients of the hosted service send and read them), with bounds, defaults and descriptions. The bodies reach the
 * service as they are, so every request schema's type is checked against the contract's type at compile time
 * (`BrowserSchemaChecks` at the end), and so is every response schema's.
 *
 * Units: timeouts and delays are milliseconds; `execution_time`, `session_seconds`, `duration_seconds` and
 * `total_seconds` are seconds; sizes and positions are CSS pixels.
 */
import { Type, type Static, type TSchema } from 'typebox';
import type * as Contract from '../../../core/browser/browser-api.ts';
import { ListOffset, StringEnum } from '../../schemas/common.ts';

export const MAX_URL_CHARS = 8192;
export const MAX_SELECTOR_CHARS = 2000;
export const MAX_TEXT_CHARS = 100_000;
/** Inline HTML of a render; the whole body is also bounded by SANDBOXD_BODY_LIMIT_BYTES (10 MiB by default). */
export const MAX_HTML_CHARS = 5 * 1024 * 1024;
export const MAX_TIMEOUT_MS = 120_000;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const VIEWPORT = { minWidth: 100, maxWidth: 3840, minHeight: 100, maxHeight: 2160, defaultWidth: 1280, defaultHeight: 720 } as const;

export const SCREENSHOT_FORMATS = ['png', 'jpeg'] as const satisfies readonly Contract.ScreenshotFormat[];
export const WAIT_UNTIL = ['load', 'domcontentloaded', 'networkidle', 'commit'] as const satisfies readonly Contract.WaitUntil[];
export const WAIT_CONDITIONS = ['selector', 'hidden', 'navigation', 'load', 'domcontentloaded', 'networkidle', 'timeout'] as const satisfies readonly Contract.WaitRequest['condition'][];
export const SESSION_STATUSES = ['active', 'closed', 'expired', 'failed'] as const satisfies readonly Contract.BrowserSessionStatus[];
export const RENDER_ACTION_TYPES = ['click', 'fill', 'type', 'scroll', 'wait', 'hover', 'keypress'] as const;

const DateTime = Type.String({ format: 'date-time' });
const DateTimeOrNull = Type.Union([DateTime, Type.Null()]);
const StringOrNull = Type.Union([Type.String(), Type.Null()]);

// ---- Pieces shared by several requests ----

const SessionId = Type.String({ minLength: 1, maxLength: 128, description: 'The browser session (from `POST /v1/browser/sessions/`)' });
const Selector = (description: string) => Type.String({ minLength: 1, maxLength: MAX_SELECTOR_CHARS, description });
const OptionalSelector = (description: string) => Type.Optional(Type.Union([Selector(description), Type.Null()]));
const TimeoutMs = (what: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_TIMEOUT_MS, default: DEFAULT_TIMEOUT_MS, description: `Milliseconds to wait ${what} (0 to ${MAX_TIMEOUT_MS}, default ${DEFAULT_TIMEOUT_MS})` }));
const Url = (description: string) => Type.String({ minLength: 1, maxLength: MAX_URL_CHARS, description });
const UserAgent = Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), Type.Null()], { description: "The User-Agent header and navigator.userAgent (default: the browser's own)" }));
const Width = Type.Integer({ minimum: VIEWPORT.minWidth, maximum: VIEWPORT.maxWidth, default: VIEWPORT.defaultWidth, description: `Viewport width, pixels (${VIEWPORT.minWidth} to ${VIEWPORT.maxWidth}, default ${VIEWPORT.defaultWidth})` });
const Height = Type.Integer({ minimum: VIEWPORT.minHeight, maximum: VIEWPORT.maxHeight, default: VIEWPORT.defaultHeight, description: `Viewport height, pixels (${VIEWPORT.minHeight} to ${VIEWPORT.maxHeight}, default ${VIEWPORT.defaultHeight})` });
const WaitUntil = StringEnum(WAIT_UNTIL, { default: 'load', description: 'When a page counts as loaded: `load` (default), `domcontentloaded`, `networkidle` (no requests for 500 ms) or `commit` (the response arrived)' });
const Format = StringEnum(SCREENSHOT_FORMATS, { default: 'png', description: 'Image format: `png` (default) or `jpeg`' });
const Quality = Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 100 }), Type.Null()], { description: 'JPEG quality, 0 to 100 (jpeg only; the browser\'s default when absent)' }));
const ApiKeyField = Type.Optional(Type.String({ description: 'The API key, for clients that send it in the body (a header works too)' }));

export const Clip = Type.Object(
  {
    x: Type.Number({ minimum: 0, maximum: 100_000 }),
    y: Type.Number({ minimum: 0, maximum: 1_000_000 }),
    width: Type.Number({ minimum: 1, maximum: 16_384 }),
    height: Type.Number({ minimum: 1, maximum: 16_384 }),
  },
  { description: 'The part of the page to capture, pixels from the top left of the page' },
);
const ClipField = Type.Optional(Type.Union([Clip, Type.Null()]));

const UsageInfo = Type.Object(
  {
    pages_visited: Type.Integer({ description: 'Navigations of the session so far' }),
    screenshots_taken: Type.Integer(),
    session_seconds: Type.Number({ description: 'Seconds since the session was created' }),
  },
  { description: 'What the session has used so far' },
);

// ---- Sessions ----

export const BrowserSessionCreateRequest = Type.Object(
  {
    viewport_width: Type.Optional(Width),
    viewport_height: Type.Optional(Height),
    user_agent: UserAgent,
    idle_timeout_seconds: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 86_400, description: 'Seconds without an interaction after which the session is closed; the default and the largest value allowed are the server\'s (see `GET /v1/browser/capabilities`)' }),
    ),
    api_key: ApiKeyField,
  },
  { $id: 'BrowserSessionCreateRequest', title: 'BrowserSessionCreateRequest' },
);

export const BrowserSessionResponse = Type.Object(
  {
    session_id: Type.String(),
    status: StringEnum(SESSION_STATUSES, { description: '`active` until it is closed (DELETE), idle past its idle timeout, past its lifetime, or its VM ends (`failed`)' }),
    viewport_width: Type.Integer(),
    viewport_height: Type.Integer(),
    user_agent: StringOrNull,
    created_at: DateTime,
    last_activity: DateTime,
    expires_at: Type.String({ format: 'date-time', description: 'When the session closes unless used again (idle timeout), never later than its lifetime allows' }),
    idle_timeout_seconds: Type.Integer(),
    url: Type.String({ description: 'The page the session shows now (about:blank at first)' }),
    pages_visited: Type.Integer(),
    screenshots_taken: Type.Integer(),
    closed_at: DateTimeOrNull,
    end_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it ended: `closed` (DELETE), `idle`, `lifetime`, `vm_ended` or `server_shutdown`; null while active' }),
  },
  { $id: 'BrowserSessionResponse', title: 'BrowserSessionResponse' },
);

export const BrowserSessionListResponse = Type.Object(
  { sessions: Type.Array(Type.Ref('BrowserSessionResponse') as unknown as typeof BrowserSessionResponse) },
  { $id: 'BrowserSessionListResponse', title: 'BrowserSessionListResponse' },
);

export const BrowserSessionCloseResponse = Type.Object(
  { success: Type.Literal(true), session_id: Type.String(), message: Type.String() },
  { $id: 'BrowserSessionCloseResponse', title: 'BrowserSessionCloseResponse' },
);

export const BrowserSessionIdParams = Type.Object({ session_id: SessionId });

// ---- Interactions ----

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

export const BrowserNavigateRequest = Type.Object(
  {
    session_id: SessionId,
    url: Url('Where to go: http, https, data or about URLs'),
    wait_timeout: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_TIMEOUT_MS, default: DEFAULT_TIMEOUT_MS, description: `Milliseconds to wait for the page to load (0 to ${MAX_TIMEOUT_MS}, default ${DEFAULT_TIMEOUT_MS}); past it, 408 BROWSER_TIMEOUT` }),
    ),
    wait_until: Type.Optional(WaitUntil),
  },
  { $id: 'BrowserNavigateRequest', title: 'BrowserNavigateRequest' },
);

export const BrowserClickRequest = Type.Object(
  {
    session_id: SessionId,
    selector: Selector('CSS selector (or a Playwright selector such as `text=Sign in`) of the element to click'),
    force: Type.Optional(Type.Boolean({ default: false, description: 'Click even if the element is covered, hidden or disabled (default false)' })),
    timeout: TimeoutMs('for the element to be clickable'),
    button: Type.Optional(StringEnum(['left', 'right', 'middle'] as const, { default: 'left', description: 'Mouse button (default left)' })),
    click_count: Type.Optional(Type.Integer({ minimum: 1, maximum: 3, default: 1, description: '1 (default), 2 for a double click, 3 for a triple click' })),
  },
  { $id: 'BrowserClickRequest', title: 'BrowserClickRequest' },
);

export const BrowserTypeRequest = Type.Object(
  {
    session_id: SessionId,
    selector: Selector('The element to type into (it is focused first)'),
    text: Type.String({ maxLength: MAX_TEXT_CHARS, description: `Typed key by key, as a user would (at most ${MAX_TEXT_CHARS} characters); \`fill\` sets a value at once` }),
    delay: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 100, description: 'Milliseconds between key presses (0 to 1000, default 100)' })),
    timeout: TimeoutMs('for the element'),
  },
  { $id: 'BrowserTypeRequest', title: 'BrowserTypeRequest' },
);

export const BrowserFillRequest = Type.Object(
  {
    session_id: SessionId,
    selector: Selector('An input, textarea, select or contenteditable element'),
    value: Type.String({ maxLength: MAX_TEXT_CHARS, description: `The value it gets, replacing what it had (at most ${MAX_TEXT_CHARS} characters)` }),
    timeout: TimeoutMs('for the element'),
  },
  { $id: 'BrowserFillRequest', title: 'BrowserFillRequest' },
);

export const BrowserScrollRequest = Type.Object(
  {
    session_id: SessionId,
    selector: OptionalSelector('Scroll this element into view'),
    x: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 10_000_000 }), Type.Null()], { description: 'Scroll the page to this horizontal position, pixels (absolute)' })),
    y: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 10_000_000 }), Type.Null()], { description: 'Scroll the page to this vertical position, pixels (absolute)' })),
  },
  { $id: 'BrowserScrollRequest', title: 'BrowserScrollRequest', description: 'Give `selector`, or `x` and/or `y`: a body with neither is a 422' },
);

export const BrowserWaitRequest = Type.Object(
  {
    session_id: SessionId,
    condition: StringEnum(WAIT_CONDITIONS, {
      description:
        '`selector` (the element is visible; needs `selector`), `hidden` (it is hidden or gone; needs `selector`), `navigation` or `load` (the load event), `domcontentloaded`, `networkidle`, or `timeout` (just wait `timeout` milliseconds)',
    }),
    selector: OptionalSelector('The element of the `selector` and `hidden` conditions'),
    timeout: TimeoutMs('for the condition (for `timeout`: how long to wait)'),
  },
  { $id: 'BrowserWaitRequest', title: 'BrowserWaitRequest' },
);

export const BrowserTargetRequest = Type.Object(
  {
    session_id: SessionId,
    selector: Selector('The element'),
    timeout: TimeoutMs('for the element'),
  },
  { $id: 'BrowserTargetRequest', title: 'BrowserTargetRequest' },
);

export const BrowserKeyPressRequest = Type.Object(
  {
    session_id: SessionId,
    key: Type.String({ minLength: 1, maxLength: 100, description: 'A key name as Playwright names them: `Enter`, `Tab`, `ArrowDown`, `a`, or a chord such as `Control+A`' }),
    selector: OptionalSelector('Press it in this element (default: the focused element)'),
    timeout: TimeoutMs('for the element'),
  },
  { $id: 'BrowserKeyPressRequest', title: 'BrowserKeyPressRequest' },
);

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

export const BrowserExtractRequest = Type.Object(
  {
    session_id: SessionId,
    selector: OptionalSelector('The elements to read (default `body *`)'),
    attributes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 50, description: 'Attributes to read from each element besides its text and tag, e.g. `["href", "class"]` (at most 50)' }),
    ),
    max_elements: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'At most this many elements, in document order (1 to 1000, default 100)' })),
  },
  { $id: 'BrowserExtractRequest', title: 'BrowserExtractRequest' },
);

const ExtractedElement = Type.Object({
  tag: Type.String(),
  text: Type.String(),
  attributes: Type.Record(Type.String(), StringOrNull, { description: 'The attributes asked for; null where the element has none of that name' }),
  selector: Type.String({ description: 'A CSS selector that finds this element again' }),
  visible: Type.Boolean(),
  value: Type.Union([Type.String(), Type.Null()], { description: 'The value of a form control (input, textarea, select), else null' }),
});

export const BrowserExtractResponse = Type.Object(
  {
    elements: Type.Array(ExtractedElement),
    count: Type.Integer(),
    execution_time: Type.Number({ description: 'Seconds' }),
    session_id: Type.String(),
  },
  { $id: 'BrowserExtractResponse', title: 'BrowserExtractResponse' },
);

export const BrowserContentRequest = Type.Object(
  {
    session_id: SessionId,
    include_interactive: Type.Optional(Type.Boolean({ default: true, description: 'List the links, buttons and form fields (default true)' })),
    include_anchors: Type.Optional(Type.Boolean({ default: true, description: 'List text anchors with selectors to reach them (default true)' })),
    max_anchors: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 50, description: 'At most this many anchors (0 to 1000, default 50)' })),
  },
  { $id: 'BrowserContentRequest', title: 'BrowserContentRequest' },
);

const InteractiveElement = Type.Object({
  type: Type.String({ description: '`link`, `button`, `input`, `textarea`, `select`, …' }),
  text: Type.String(),
  selector: Type.String(),
  attributes: Type.Record(Type.String(), Type.String(), { description: 'For inputs: name, type, placeholder, value; for links: href' }),
});

export const BrowserContentResponse = Type.Object(
  {
    readable_content: Type.Object(
      { content: Type.String(), title: Type.String(), length: Type.Integer({ description: 'Characters of content' }) },
      { description: "The page's readable text (scripts, styles and hidden elements left out), and its title" },
    ),
    interactive_elements: Type.Array(InteractiveElement),
    content_anchors: Type.Array(Type.Object({ text: Type.String(), selector: Type.String(), href: StringOrNull })),
    execution_time: Type.Number({ description: 'Seconds' }),
    session_id: Type.String(),
    url: Type.String(),
    usage_info: UsageInfo,
  },
  { $id: 'BrowserContentResponse', title: 'BrowserContentResponse' },
);

export const BrowserFillCredentialRequest = Type.Object(
  {
    session_id: SessionId,
    credential_id: Type.String({ minLength: 1, maxLength: 64, description: 'A stored credential (`POST /v1/browser/credentials`) allowed on the page\'s host' }),
    username_selector: OptionalSelector('The username field (default: the first `input[type=email]`, `input[name*=user]` or text input of the page)'),
    password_selector: OptionalSelector('The password field (default: the first `input[type=password]`)'),
    submit: Type.Optional(Type.Boolean({ default: false, description: 'Press Enter in the password field after filling (default false)' })),
    timeout: TimeoutMs('for the fields'),
  },
  { $id: 'BrowserFillCredentialRequest', title: 'BrowserFillCredentialRequest' },
);

// ---- One-shot render ----

const RenderAction = Type.Unsafe<Record<string, unknown>>(
  Type.Object(
    {
      type: StringEnum(RENDER_ACTION_TYPES, { description: 'The interaction' }),
    },
    {
      additionalProperties: true,
      description: 'An interaction run after the page loaded: `type` and the fields of that interaction\'s request without `session_id`, e.g. `{"type":"click","selector":"#accept"}`, `{"type":"fill","selector":"#q","value":"otters"}`, `{"type":"wait","condition":"networkidle"}`',
    },
  ),
);

export const BrowserRenderRequest = Type.Object(
  {
    url: Type.Optional(Type.Union([Url('The page to render (http, https, data or about); give `url` or `html`'), Type.Null()])),
    html: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: MAX_HTML_CHARS, description: `A document to render instead of a URL (at most ${MAX_HTML_CHARS} characters)` }), Type.Null()])),
    width: Type.Optional(Width),
    height: Type.Optional(Height),
    user_agent: UserAgent,
    wait_until: Type.Optional(WaitUntil),
    wait_for_selector: OptionalSelector('Also wait until this element is visible'),
    wait_timeout: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_TIMEOUT_MS, default: DEFAULT_TIMEOUT_MS, description: `Milliseconds for loading and \`wait_for_selector\` together (0 to ${MAX_TIMEOUT_MS}, default ${DEFAULT_TIMEOUT_MS})` }),
    ),
    full_page: Type.Optional(Type.Boolean({ default: false, description: 'The whole scrollable page instead of the viewport (default false)' })),
    clip: ClipField,
    format: Type.Optional(Format),
    quality: Quality,
    return_html: Type.Optional(Type.Boolean({ default: false, description: "Answer the page's HTML after the actions ran (default false)" })),
    return_text: Type.Optional(Type.Boolean({ default: false, description: "Answer the page's readable text (default false)" })),
    return_screenshot: Type.Optional(Type.Boolean({ default: true, description: 'Answer a screenshot, base64 (default true); it is stored either way while retention keeps it' })),
    actions: Type.Optional(Type.Array(RenderAction, { maxItems: 50, description: 'Interactions run in order after loading (at most 50)' })),
    api_key: ApiKeyField,
  },
  { $id: 'BrowserRenderRequest', title: 'BrowserRenderRequest', description: 'Give exactly one of `url` and `html`' },
);

export const BrowserRenderResponse = Type.Object(
  {
    success: Type.Boolean(),
    usage_id: Type.Integer({ description: 'The usage record of this render (`GET /v1/browser/screenshot/{usage_id}`)' }),
    url: Type.String({ description: 'The final URL, after redirects' }),
    title: Type.String(),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The main document's HTTP status; null for inline HTML" }),
    screenshot: Type.Union([Type.String(), Type.Null()], { description: 'The image, base64; null when `return_screenshot` was false' }),
    format: Type.Union([StringEnum(SCREENSHOT_FORMATS), Type.Null()]),
    width: Type.Integer({ description: 'Image width, pixels' }),
    height: Type.Integer({ description: 'Image height, pixels' }),
    html: StringOrNull,
    text: StringOrNull,
    execution_time: Type.Number({ description: 'Seconds' }),
    screenshot_url: Type.Union([Type.String(), Type.Null()], { description: 'Where the stored screenshot can be fetched again while retention keeps it' }),
  },
  { $id: 'BrowserRenderResponse', title: 'BrowserRenderResponse' },
);

// ---- Usage, stored screenshots, capabilities, auth test ----

const UsageTotals = {
  renders: Type.Integer(),
  sessions: Type.Integer(),
  pages: Type.Integer(),
  screenshots: Type.Integer(),
  total_seconds: Type.Number({ description: 'Seconds of browser time' }),
};

export const BrowserUsageSummary = Type.Object(
  {
    user_id: Type.Integer(),
    ...UsageTotals,
    active_sessions: Type.Integer(),
    max_sessions: Type.Integer({ description: "The plan's limit of open sessions" }),
    last_30_days: Type.Object(UsageTotals),
  },
  { $id: 'BrowserUsageSummary', title: 'BrowserUsageSummary' },
);

export const BrowserUsageRecord = Type.Object(
  {
    usage_id: Type.Integer(),
    kind: StringEnum(['render', 'session'] as const),
    session_id: StringOrNull,
    url: StringOrNull,
    status: StringEnum(['ok', 'failed', 'active'] as const),
    error: StringOrNull,
    pages: Type.Integer(),
    screenshots: Type.Integer(),
    duration_seconds: Type.Number(),
    has_screenshot: Type.Boolean({ description: 'A screenshot is stored (`GET /v1/browser/screenshot/{usage_id}`)' }),
    created_at: DateTime,
  },
  { $id: 'BrowserUsageRecord', title: 'BrowserUsageRecord', description: 'One per render and per browser session' },
);

export const BrowserUsageHistory = Type.Object(
  {
    items: Type.Array(Type.Ref('BrowserUsageRecord') as unknown as typeof BrowserUsageRecord),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'BrowserUsageHistory', title: 'BrowserUsageHistory' },
);

export const BrowserUsageHistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50, description: 'Records per page (1 to 1000, default 50)' }),
  offset: ListOffset,
});

export const BrowserStoredScreenshot = Type.Object(
  {
    usage_id: Type.Integer(),
    format: StringEnum(SCREENSHOT_FORMATS),
    content_type: Type.String({ description: '`image/png` or `image/jpeg`' }),
    screenshot: Type.String({ description: 'The image, base64' }),
    bytes: Type.Integer({ description: 'Size of the image' }),
    created_at: DateTime,
    expires_at: Type.Union([DateTime, Type.Null()], { description: 'When retention deletes it; null: kept' }),
  },
  { $id: 'BrowserStoredScreenshot', title: 'BrowserStoredScreenshot' },
);

export const BrowserCapabilities = Type.Object(
  {
    engine: Type.Literal('chromium'),
    version: Type.String({ description: "The browser's version" }),
    interactions: Type.Array(Type.String(), { description: 'The interaction operations served' }),
    screenshot_formats: Type.Array(StringEnum(SCREENSHOT_FORMATS)),
    wait_conditions: Type.Array(StringEnum(WAIT_CONDITIONS)),
    wait_until: Type.Array(StringEnum(WAIT_UNTIL)),
    max_viewport: Type.Object({ width: Type.Integer(), height: Type.Integer() }),
    default_viewport: Type.Object({ width: Type.Integer(), height: Type.Integer() }),
    idle_timeout_seconds: Type.Integer({ description: 'The default idle timeout of a session' }),
    max_session_seconds: Type.Integer({ description: 'The longest a session lives, used or not' }),
    max_sessions: Type.Integer({ description: 'Open sessions your plan allows' }),
    warm_pool_size: Type.Integer({ description: 'Browsers kept started ahead of need' }),
  },
  { $id: 'BrowserCapabilities', title: 'BrowserCapabilities' },
);

export const BrowserAuthTestRequest = Type.Object(
  { api_key: ApiKeyField },
  { $id: 'BrowserAuthTestRequest', title: 'BrowserAuthTestRequest', description: 'Optional: the key may come in a header instead' },
);

export const BrowserAuthTestResponse = Type.Object(
  {
    success: Type.Literal(true),
    authenticated: Type.Literal(true),
    user_id: Type.Integer(),
    username: Type.String(),
    plan: Type.String(),
    browser_available: Type.Boolean({ description: 'A browser can be started now' }),
    message: Type.String(),
  },
  { $id: 'BrowserAuthTestResponse', title: 'BrowserAuthTestResponse' },
);

// ---- Stored credentials ----

const HostPattern = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]{1,5})?$',
  description: 'A host name, exact (`example.com` does not cover `www.example.com`) or `*.example.com` for its subdomains',
});
const AllowedHosts = Type.Array(HostPattern, { minItems: 1, maxItems: 50, description: 'The hosts it may be filled on (1 to 50): the page must be on one of them' });
const CredentialUsername = Type.String({ minLength: 1, maxLength: 1024 });
const CredentialPassword = Type.String({ minLength: 1, maxLength: 4096, description: 'Never shown again: no answer or list has it' });

export const BrowserCredentialRecord = Type.Object(
  {
    credential_id: Type.String(),
    name: Type.String(),
    username: Type.String(),
    allowed_hosts: Type.Array(Type.String()),
    created_at: DateTime,
    updated_at: DateTime,
    last_used_at: DateTimeOrNull,
  },
  { $id: 'BrowserCredentialRecord', title: 'BrowserCredentialRecord', description: 'A stored login: never its password' },
);

export const BrowserCredentialList = Type.Object(
  { credentials: Type.Array(Type.Ref('BrowserCredentialRecord') as unknown as typeof BrowserCredentialRecord) },
  { $id: 'BrowserCredentialList', title: 'BrowserCredentialList' },
);

export const BrowserCredentialCreateRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique among your credentials' }),
    username: CredentialUsername,
    password: CredentialPassword,
    allowed_hosts: AllowedHosts,
  },
  { $id: 'BrowserCredentialCreateRequest', title: 'BrowserCredentialCreateRequest' },
);

export const BrowserCredentialUpdateRequest = Type.Object(
  {
    username: Type.Optional(CredentialUsername),
    password: Type.Optional(CredentialPassword),
    allowed_hosts: Type.Optional(AllowedHosts),
  },
  { $id: 'BrowserCredentialUpdateRequest', title: 'BrowserCredentialUpdateRequest', description: 'Absent fields are kept' },
);

export const BrowserCredentialIdParams = Type.Object({ credential_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const BROWSER_SCHEMAS: TSchema[] = [
  BrowserSessionCreateRequest,
  BrowserSessionResponse,
  BrowserSessionListResponse,
  BrowserSessionCloseResponse,
  BrowserInteractionResponse,
  BrowserNavigateRequest,
  BrowserClickRequest,
  BrowserTypeRequest,
  BrowserFillRequest,
  BrowserScrollRequest,
  BrowserWaitRequest,
  BrowserTargetRequest,
  BrowserKeyPressRequest,
  BrowserScreenshotRequest,
  BrowserScreenshotResponse,
  BrowserExtractRequest,
  BrowserExtractResponse,
  BrowserContentRequest,
  BrowserContentResponse,
  BrowserFillCredentialRequest,
  BrowserRenderRequest,
  BrowserRenderResponse,
  BrowserUsageSummary,
  BrowserUsageRecord,
  BrowserUsageHistory,
  BrowserStoredScreenshot,
  BrowserCapabilities,
  BrowserAuthTestRequest,
  BrowserAuthTestResponse,
  BrowserCredentialRecord,
  BrowserCredentialList,
  BrowserCredentialCreateRequest,
  BrowserCredentialUpdateRequest,
];

// ---- The schemas are the contract's shapes ----

/** True when A and B are assignable both ways and have the same keys (an extra optional field shows). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? ([keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false) : false) : false;
type Expect<T extends true> = T;
type ReturnOf<M extends keyof Contract.BrowserApi> = Awaited<ReturnType<Contract.BrowserApi[M]>>;

/** A compile error here means a schema and `browser-api.ts` disagree. */
export type BrowserSchemaChecks = [
  Expect<Same<Static<typeof BrowserSessionCreateRequest>, Contract.BrowserSessionCreateRequest>>,
  Expect<Same<Static<typeof BrowserSessionResponse>, Contract.BrowserSessionResponse>>,
  Expect<Same<Static<typeof BrowserSessionListResponse>, Contract.BrowserSessionListResponse>>,
  Expect<Same<Static<typeof BrowserSessionCloseResponse>, ReturnOf<'closeSession'>>>,
  Expect<Same<Static<typeof BrowserInteractionResponse>, Contract.BrowserInteractionResponse>>,
  Expect<Same<Static<typeof BrowserNavigateRequest>, Contract.NavigateRequest>>,
  Expect<Same<Static<typeof BrowserClickRequest>, Contract.ClickRequest>>,
  Expect<Same<Static<typeof BrowserTypeRequest>, Contract.TypeRequest>>,
  Expect<Same<Static<typeof BrowserFillRequest>, Contract.FillRequest>>,
  Expect<Same<Static<typeof BrowserScrollRequest>, Contract.ScrollRequest>>,
  Expect<Same<Static<typeof BrowserWaitRequest>, Contract.WaitRequest>>,
  Expect<Same<Static<typeof BrowserTargetRequest>, Contract.TargetRequest>>,
  Expect<Same<Static<typeof BrowserKeyPressRequest>, Contract.KeyPressRequest>>,
  Expect<Same<Static<typeof BrowserScreenshotRequest>, Contract.ScreenshotRequest>>,
  Expect<Same<Static<typeof Clip>, Contract.Clip>>,
  Expect<Same<Static<typeof BrowserScreenshotResponse>, Contract.ScreenshotResponse>>,
  Expect<Same<Static<typeof UsageInfo>, Contract.UsageInfo>>,
  Expect<Same<Static<typeof BrowserExtractRequest>, Contract.ExtractRequest>>,
  Expect<Same<Static<typeof ExtractedElement>, Contract.ExtractedElement>>,
  Expect<Same<Static<typeof BrowserExtractResponse>, Contract.ExtractResponse>>,
  Expect<Same<Static<typeof BrowserContentRequest>, Contract.ContentRequest>>,
  Expect<Same<Static<typeof InteractiveElement>, Contract.InteractiveElement>>,
  Expect<Same<Static<typeof BrowserContentResponse>, Contract.ContentResponse>>,
  Expect<Same<Static<typeof BrowserFillCredentialRequest>, Contract.FillCredentialRequest>>,
  Expect<Same<Static<typeof BrowserRenderRequest>, Contract.RenderRequest>>,
  Expect<Same<Static<typeof BrowserRenderResponse>, Contract.RenderResponse>>,
  Expect<Same<Static<typeof BrowserUsageSummary>, Contract.BrowserUsageSummary>>,
  Expect<Same<Static<typeof BrowserUsageRecord>, Contract.BrowserUsageRecord>>,
  Expect<Same<Static<typeof BrowserUsageHistory>, Contract.BrowserUsageHistory>>,
  Expect<Same<Static<typeof BrowserStoredScreenshot>, Contract.StoredScreenshot>>,
  Expect<Same<Static<typeof BrowserCapabilities>, Contract.BrowserCapabilities>>,
  Expect<Same<Static<typeof BrowserAuthTestResponse>, ReturnOf<'authTest'>>>,
  Expect<Same<Static<typeof BrowserCredentialRecord>, Contract.BrowserCredentialRecord>>,
  Expect<Same<Static<typeof BrowserCredentialList>, ReturnOf<'listCredentials'>>>,
  Expect<Same<Static<typeof BrowserCredentialCreateRequest>, Contract.BrowserCredentialCreateRequest>>,
  Expect<Same<Static<typeof BrowserCredentialUpdateRequest>, Contract.BrowserCredentialUpdateRequest>>,
];
