/**
 * The browser part of the API as the core serves it: the wire shapes (snake_case, as the published clients of the
 * hosted service send and read them: `../shared/spec/wire-notes.md`) and the service the routes call. The routes
 * (`api/routes/browser/`) validate with TypeBox schemas of the same shapes and hand the bodies over as they are.
 *
 * Errors the service throws (AppError, mapped in one place):
 * - 404 NOT_FOUND: unknown browser session, or one of another user (never told apart);
 * - 404 ELEMENT_NOT_FOUND: a selector matched nothing (the response carries `selector`);
 * - 408 BROWSER_TIMEOUT: a wait, navigation or action ran past its timeout;
 * - 400 NAVIGATION_FAILED: the page could not be loaded (DNS, refused, TLS, a bad scheme);
 * - 422 (InputError) for input the schema lets through but that is still wrong;
 * - 429 QUOTA_EXCEEDED: the plan's browser sessions are all open.
 */
import type { Principal } from '../authenticator.ts';

export type ScreenshotFormat = 'png' | 'jpeg';
export type WaitUntil = 'load' | 'domcontentloaded' | 'networkidle' | 'commit';

export interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** States of a browser session: `active` until closed by its owner, its idle timeout, its lifetime, or its VM ending. */
export type BrowserSessionStatus = 'active' | 'closed' | 'expired' | 'failed';

export interface BrowserSessionCreateRequest {
  viewport_width?: number;
  viewport_height?: number;
  user_agent?: string | null;
  /** Seconds without an interaction after which the session is closed (default and bound from config). */
  idle_timeout_seconds?: number;
  /** Ignored (the key travels in the header or here, as the published clients send it). */
  api_key?: string;
}

export interface BrowserSessionResponse {
  session_id: string;
  status: BrowserSessionStatus;
  viewport_width: number;
  viewport_height: number;
  user_agent: string | null;
  created_at: string;
  last_activity: string;
  /** When the session closes unless used again (idle timeout), never later than its lifetime allows. */
  expires_at: string;
  idle_timeout_seconds: number;
  /** The page the session shows now (about:blank at first). */
  url: string;
  pages_visited: number;
  screenshots_taken: number;
  closed_at: string | null;
  /** Why it ended: `closed` (DELETE), `idle`, `lifetime`, `vm_ended`, `server_shutdown`. */
  end_reason: string | null;
}

export interface BrowserSessionListResponse {
  sessions: BrowserSessionResponse[];
}

/** What every interaction answers (screenshot, extract and content answer their own shapes). */
export interface BrowserInteractionResponse {
  success: boolean;
  message: string;
  /** Seconds. */
  execution_time: number;
  session_id: string;
  /** What the interaction found or did, e.g. `{url, title}` after navigate, `{x, y}` after scroll. */
  data: Record<string, unknown> | null;
}

export interface NavigateRequest {
  session_id: string;
  url: string;
  /** Milliseconds (default 30000). */
  wait_timeout?: number;
  wait_until?: WaitUntil;
}

export interface ClickRequest {
  session_id: string;
  selector: string;
  force?: boolean;
  /** Milliseconds (default 30000), here and in every `timeout` below. */
  timeout?: number;
  button?: 'left' | 'right' | 'middle';
  click_count?: number;
}

export interface TypeRequest {
  session_id: string;
  selector: string;
  text: string;
  /** Milliseconds between key presses (default 100). */
  delay?: number;
  timeout?: number;
}

export interface FillRequest {
  session_id: string;
  selector: string;
  value: string;
  timeout?: number;
}

/** Scrolls the element into view (`selector`), or the page to `x`/`y` (pixels, absolute). One of them is required. */
export interface ScrollRequest {
  session_id: string;
  selector?: string | null;
  x?: number | null;
  y?: number | null;
}

/**
 * `condition`: `selector` (visible; needs `selector`), `hidden` (needs `selector`), `navigation`/`load`,
 * `domcontentloaded`, `networkidle`, or `timeout` (sleep `timeout` ms).
 */
export interface WaitRequest {
  session_id: string;
  condition: 'selector' | 'hidden' | 'navigation' | 'load' | 'domcontentloaded' | 'networkidle' | 'timeout';
  selector?: string | null;
  timeout?: number;
}

/** hover: `BrowserTargetRequest`. */
export interface TargetRequest {
  session_id: string;
  selector: string;
  timeout?: number;
}

/** keypress: Playwright key names (`Enter`, `Tab`, `Control+A`); into `selector` when given, else the focused element. */
export interface KeyPressRequest {
  session_id: string;
  key: string;
  selector?: string | null;
  timeout?: number;
}

export interface ScreenshotRequest {
  session_id: string;
  full_page?: boolean;
  format?: ScreenshotFormat;
  clip?: Clip | null;
  /** 0–100, jpeg only. */
  quality?: number | null;
}

export interface UsageInfo {
  pages_visited: number;
  screenshots_taken: number;
  session_seconds: number;
}

export interface ScreenshotResponse {
  /** Base64 of the image bytes. */
  screenshot: string;
  format: ScreenshotFormat;
  width: number;
  height: number;
  execution_time: number;
  session_id: string;
  usage_info: UsageInfo;
}

export interface ExtractRequest {
  session_id: string;
  /** Default `body *` limited to `max_elements`. */
  selector?: string | null;
  /** Attributes to read from each element (besides text and tag). */
  attributes?: string[];
  max_elements?: number;
}

export interface ExtractedElement {
  tag: string;
  text: string;
  attributes: Record<string, string | null>;
  /** A CSS selector that finds this element again. */
  selector: string;
  visible: boolean;
  /** The value of a form control (input, textarea, select), else null. */
  value: string | null;
}

export interface ExtractResponse {
  elements: ExtractedElement[];
  count: number;
  execution_time: number;
  session_id: string;
}

export interface ContentRequest {
  session_id: string;
  include_interactive?: boolean;
  include_anchors?: boolean;
  max_anchors?: number;
}

export interface InteractiveElement {
  /** `link`, `button`, `input`, `textarea`, `select`, … */
  type: string;
  text: string;
  selector: string;
  /** For inputs: name, type, placeholder, value; for links: href. */
  attributes: Record<string, string>;
}

export interface ContentResponse {
  /** The page's readable text (scripts, styles and hidden elements left out), and its title. */
  readable_content: { content: string; title: string; length: number };
  interactive_elements: InteractiveElement[];
  content_anchors: { text: string; selector: string; href: string | null }[];
  execution_time: number;
  session_id: string;
  url: string;
  usage_info: UsageInfo;
}

export interface FillCredentialRequest {
  session_id: string;
  credential_id: string;
  /** Default: the first `input[type=email]`, `input[name*=user]` or text input of the page. */
  username_selector?: string | null;
  /** Default: the first `input[type=password]`. */
  password_selector?: string | null;
  /** Press Enter in the password field after filling. */
  submit?: boolean;
  timeout?: number;
}

export interface RenderRequest {
  url?: string | null;
  html?: string | null;
  width?: number;
  height?: number;
  user_agent?: string | null;
  wait_until?: WaitUntil;
  wait_for_selector?: string | null;
  /** Milliseconds (default 30000): navigation and wait_for_selector together. */
  wait_timeout?: number;
  full_page?: boolean;
  clip?: Clip | null;
  format?: ScreenshotFormat;
  quality?: number | null;
  return_html?: boolean;
  return_text?: boolean;
  return_screenshot?: boolean;
  /** Interactions run after loading, in order: `{type: 'click'|'fill'|'type'|'scroll'|'wait'|'hover'|'keypress', …fields}`. */
  actions?: Record<string, unknown>[];
  api_key?: string;
}

export interface RenderResponse {
  success: boolean;
  usage_id: number;
  url: string;
  title: string;
  status_code: number | null;
  screenshot: string | null;
  format: ScreenshotFormat | null;
  width: number;
  height: number;
  html: string | null;
  text: string | null;
  execution_time: number;
  /** Where the stored screenshot can be fetched again (while retention keeps it). */
  screenshot_url: string | null;
}

/** A usage record: one per render and per browser session. */
export interface BrowserUsageRecord {
  usage_id: number;
  kind: 'render' | 'session';
  session_id: string | null;
  url: string | null;
  status: 'ok' | 'failed' | 'active';
  error: string | null;
  pages: number;
  screenshots: number;
  duration_seconds: number;
  has_screenshot: boolean;
  created_at: string;
}

export interface BrowserUsageSummary {
  user_id: number;
  renders: number;
  sessions: number;
  active_sessions: number;
  pages: number;
  screenshots: number;
  total_seconds: number;
  /** The plan's limit of open sessions. */
  max_sessions: number;
  last_30_days: { renders: number; sessions: number; pages: number; screenshots: number; total_seconds: number };
}

export interface BrowserUsageHistory {
  items: BrowserUsageRecord[];
  total: number;
  limit: number;
  offset: number;
}

export interface StoredScreenshot {
  usage_id: number;
  format: ScreenshotFormat;
  content_type: string;
  /** Base64. */
  screenshot: string;
  bytes: number;
  created_at: string;
  expires_at: string | null;
}

/** A stored credential as the API shows it: never its secret. */
export interface BrowserCredentialRecord {
  credential_id: string;
  name: string;
  username: string;
  /** Host names it may be filled on (`example.com` also covers `www.example.com`? no: exact, or `*.example.com`). */
  allowed_hosts: string[];
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}

export interface BrowserCredentialCreateRequest {
  name: string;
  username: string;
  password: string;
  allowed_hosts: string[];
}

export interface BrowserCredentialUpdateRequest {
  username?: string;
  password?: string;
  allowed_hosts?: string[];
}

export interface BrowserCapabilities {
  engine: 'chromium';
  version: string;
  interactions: string[];
  screenshot_formats: ScreenshotFormat[];
  wait_conditions: WaitRequest['condition'][];
  wait_until: WaitUntil[];
  max_viewport: { width: number; height: number };
  default_viewport: { width: number; height: number };
  idle_timeout_seconds: number;
  max_session_seconds: number;
  max_sessions: number;
  warm_pool_size: number;
}

/** What the routes call. Every method checks that `principal` owns what it touches (404 otherwise). */
export interface BrowserApi {
  createSession(principal: Principal, request: BrowserSessionCreateRequest): Promise<BrowserSessionResponse>;
  listSessions(principal: Principal): Promise<BrowserSessionListResponse>;
  getSession(principal: Principal, sessionId: string): Promise<BrowserSessionResponse>;
  closeSession(principal: Principal, sessionId: string): Promise<{ success: true; session_id: string; message: string }>;
  capabilities(principal: Principal): Promise<BrowserCapabilities>;

  navigate(principal: Principal, request: NavigateRequest): Promise<BrowserInteractionResponse>;
  click(principal: Principal, request: ClickRequest): Promise<BrowserInteractionResponse>;
  type(principal: Principal, request: TypeRequest): Promise<BrowserInteractionResponse>;
  fill(principal: Principal, request: FillRequest): Promise<BrowserInteractionResponse>;
  scroll(principal: Principal, request: ScrollRequest): Promise<BrowserInteractionResponse>;
  wait(principal: Principal, request: WaitRequest): Promise<BrowserInteractionResponse>;
  hover(principal: Principal, request: TargetRequest): Promise<BrowserInteractionResponse>;
  keypress(principal: Principal, request: KeyPressRequest): Promise<BrowserInteractionResponse>;
  screenshot(principal: Principal, request: ScreenshotRequest): Promise<ScreenshotResponse>;
  extract(principal: Principal, request: ExtractRequest): Promise<ExtractResponse>;
  content(principal: Principal, request: ContentRequest): Promise<ContentResponse>;
  fillCredential(principal: Principal, request: FillCredentialRequest): Promise<BrowserInteractionResponse>;

  render(principal: Principal, request: RenderRequest): Promise<RenderResponse>;
  usage(principal: Principal): Promise<BrowserUsageSummary>;
  usageHistory(principal: Principal, page: { limit: number; offset: number }): Promise<BrowserUsageHistory>;
  storedScreenshot(principal: Principal, usageId: number): Promise<StoredScreenshot>;
  authTest(principal: Principal): Promise<{ success: true; authenticated: true; user_id: number; username: string; plan: string; browser_available: boolean; message: string }>;

  createCredential(principal: Principal, request: BrowserCredentialCreateRequest): Promise<BrowserCredentialRecord>;
  listCredentials(principal: Principal): Promise<{ credentials: BrowserCredentialRecord[] }>;
  getCredential(principal: Principal, credentialId: string): Promise<BrowserCredentialRecord>;
  updateCredential(principal: Principal, credentialId: string, request: BrowserCredentialUpdateRequest): Promise<BrowserCredentialRecord>;
  deleteCredential(principal: Principal, credentialId: string): Promise<void>;
}
