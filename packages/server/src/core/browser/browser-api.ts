/**
 * The browser part of the API as the core serves it: the service the routes call (`services.sandbox.browser`),
 * typed with the wire shapes of the contract (`contract/browser/`), which the routes validate bodies against and
 * hand over as they are (defaults filled in).
 *
 * Errors the service throws (AppError, mapped in one place):
 * - 404 NOT_FOUND: unknown browser session, or one of another user (never told apart);
 * - 404 ELEMENT_NOT_FOUND: a selector matched nothing (the response carries `selector`);
 * - 408 BROWSER_TIMEOUT: a wait, navigation or action ran past its timeout;
 * - 400 NAVIGATION_FAILED: the page could not be loaded (DNS, refused, TLS, a bad scheme);
 * - 422 (InputError) for input the schema lets through but that is still wrong (a URL's scheme, a host pattern,
 *   an idle timeout past the server's);
 * - 429 QUOTA_EXCEEDED: the plan's browser sessions are all open.
 */
import type * as Wire from '../../contract/browser/index.ts';
import type { Principal } from '../authenticator.ts';

/** What the routes call. Every method checks that `principal` owns what it touches (404 otherwise). */
export interface BrowserApi {
  createSession(principal: Principal, request: Wire.BrowserSessionCreateRequest): Promise<Wire.BrowserSessionResponse>;
  listSessions(principal: Principal): Promise<Wire.BrowserSessionListResponse>;
  getSession(principal: Principal, sessionId: string): Promise<Wire.BrowserSessionResponse>;
  closeSession(principal: Principal, sessionId: string): Promise<Wire.BrowserSessionCloseResponse>;
  capabilities(principal: Principal): Promise<Wire.BrowserCapabilities>;

  navigate(principal: Principal, request: Wire.BrowserNavigateRequest): Promise<Wire.BrowserInteractionResponse>;
  click(principal: Principal, request: Wire.BrowserClickRequest): Promise<Wire.BrowserInteractionResponse>;
  type(principal: Principal, request: Wire.BrowserTypeRequest): Promise<Wire.BrowserInteractionResponse>;
  fill(principal: Principal, request: Wire.BrowserFillRequest): Promise<Wire.BrowserInteractionResponse>;
  scroll(principal: Principal, request: Wire.BrowserScrollRequest): Promise<Wire.BrowserInteractionResponse>;
  wait(principal: Principal, request: Wire.BrowserWaitRequest): Promise<Wire.BrowserInteractionResponse>;
  hover(principal: Principal, request: Wire.BrowserTargetRequest): Promise<Wire.BrowserInteractionResponse>;
  keypress(principal: Principal, request: Wire.BrowserKeyPressRequest): Promise<Wire.BrowserInteractionResponse>;
  screenshot(principal: Principal, request: Wire.BrowserScreenshotRequest): Promise<Wire.BrowserScreenshotResponse>;
  extract(principal: Principal, request: Wire.BrowserExtractRequest): Promise<Wire.BrowserExtractResponse>;
  content(principal: Principal, request: Wire.BrowserContentRequest): Promise<Wire.BrowserContentResponse>;
  fillCredential(principal: Principal, request: Wire.BrowserFillCredentialRequest): Promise<Wire.BrowserInteractionResponse>;

  render(principal: Principal, request: Wire.BrowserRenderRequest): Promise<Wire.BrowserRenderResponse>;
  usage(principal: Principal): Promise<Wire.BrowserUsageSummary>;
  usageHistory(principal: Principal, page: { limit: number; offset: number }): Promise<Wire.BrowserUsageHistory>;
  storedScreenshot(principal: Principal, usageId: number): Promise<Wire.BrowserStoredScreenshot>;
  authTest(principal: Principal): Promise<Wire.BrowserAuthTestResponse>;

  createCredential(principal: Principal, request: Wire.BrowserCredentialCreateRequest): Promise<Wire.BrowserCredentialRecord>;
  listCredentials(principal: Principal): Promise<Wire.BrowserCredentialList>;
  getCredential(principal: Principal, credentialId: string): Promise<Wire.BrowserCredentialRecord>;
  updateCredential(principal: Principal, credentialId: string, request: Wire.BrowserCredentialUpdateRequest): Promise<Wire.BrowserCredentialRecord>;
  deleteCredential(principal: Principal, credentialId: string): Promise<void>;
}
