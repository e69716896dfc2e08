/**
 * Browser automation: sessions (one VM from the built-in `browser` template each, driven through `BrowserDriver`),
 * their interactions, one-shot renders (a VM for the one page, killed after), usage records and stored screenshots,
 * and the credentials `fill-credential` types into pages.
 *
 * This is the facade the API calls (`BrowserApi`); each job is a part of its own: the browser VMs and the plan's
 * count of them (`browser-vms.ts`), sessions and their queues (`sessions.ts`), interactions (`interactions.ts`),
 * renders (`renders.ts`), credentials (`credentials.ts`), usage and stored screenshots (`usage.ts`). The page
 * actions both interactions and renders run are `page-actions.ts`. Here: the wiring, the start (leftovers, pool),
 * the background timers, and what the service says about itself (capabilities, auth test).
 */
import type * as Wire from '../../contract/browser/index.ts';
import { BROWSER_INTERACTIONS, SCREENSHOT_FORMATS, VIEWPORT, WAIT_CONDITIONS, WAIT_UNTIL } from '../../contract/browser/index.ts';
import type { Principal } from '../authenticator.ts';
import { BackgroundTimers, type BackgroundFailures } from '../background-timers.ts';
import type { Clock } from '../clock.ts';
import type { EventNotifier } from '../events.ts';
import type { PlanLimiter } from '../limits.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { TemplateImage, VmEngine } from '../vm-engine.ts';
import type { Database } from '../../store/database.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import type { BrowserApi } from './browser-api.ts';
import type { BrowserDriver } from './browser-driver.ts';
import type { Ownership } from '../cluster/ownership.ts';
import { BrowserVms } from './browser-vms.ts';
import { BrowserCredentials } from './credentials.ts';
import { BrowserInteractions } from './interactions.ts';
import { BrowserRenders } from './renders.ts';
import { BrowserSessions } from './sessions.ts';
import { BrowserUsage } from './usage.ts';

export interface BrowserServiceOptions {
  /** This node: a session's page lives on the node that opened it. */
  ownership: Ownership;
  vcpuCount: number;
  memoryMb: number;
  poolSize: number;
  idleTimeoutSeconds: number;
  maxSessionSeconds: number;
  /** Stored screenshots older than this are deleted (0: kept). */
  screenshotRetentionDays: number;
  /** Viewport when a request names none. */
  defaultViewport: { width: number; height: number };
  /** How often idle and lifetime limits are checked, ms. */
  sweepIntervalMs?: number;
  /** Where the sweep and the screenshot retention report their failures. */
  failures: BackgroundFailures;
}

const RETENTION_INTERVAL_MS = 3_600_000;

export class BrowserService implements BrowserApi {
  private readonly vms: BrowserVms;
  private readonly sessions: BrowserSessions;
  private readonly interactions: BrowserInteractions;
  private readonly renders: BrowserRenders;
  private readonly credentials: BrowserCredentials;
  private readonly usageRecords: BrowserUsage;
  private readonly timers: BackgroundTimers;
  private starting: Promise<void> | undefined;

  constructor(
    database: Database,
    clock: Clock,
    notifier: EventNotifier,
    private readonly engine: VmEngine,
    private readonly driver: BrowserDriver,
    private readonly limiter: PlanLimiter,
    objects: ObjectStore,
    box: SecretBox,
    loadTemplate: () => Promise<TemplateImage>,
    private readonly options: BrowserServiceOptions,
  ) {
    this.timers = new BackgroundTimers(options.failures);
    const ready = () => this.start();
    this.vms = new BrowserVms(engine, driver, limiter, loadTemplate, { vcpuCount: options.vcpuCount, memoryMb: options.memoryMb, poolSize: options.poolSize });
    this.sessions = new BrowserSessions(database, clock, notifier, engine, this.vms, ready, options);
    this.interactions = new BrowserInteractions(this.sessions);
    this.renders = new BrowserRenders(database, clock, engine, objects, this.vms, ready, options.defaultViewport);
    this.credentials = new BrowserCredentials(database, clock, box, this.sessions);
    this.usageRecords = new BrowserUsage(database, clock, limiter, objects, this.sessions, options.screenshotRetentionDays);
  }

  /** Starts the idle sweep and the screenshot retention (no VM work: the app calls it when it is ready). */
  begin(): void {
    if (this.timers.running) return;
    this.timers.every('browser_sweep', this.options.sweepIntervalMs ?? 5000, () => this.sessions.sweep());
    if (this.usageRecords.retains) {
      this.timers.every('browser_screenshot_retention', RETENTION_INTERVAL_MS, () => this.usageRecords.pruneScreenshots());
      void this.usageRecords.pruneScreenshots().catch((error: unknown) => this.options.failures.report('browser_screenshot_retention', error));
    }
  }

  /**
   * Once, before the first session or render (and by main.ts at start): ends the sessions an earlier process of
   * this node left active (their pages were that process's connections; their VMs are killed), and fills the
   * browser pool when it has a size.
   */
  start(): Promise<void> {
    this.starting ??= this.startOnce();
    this.starting.catch(() => (this.starting = undefined));
    return this.starting;
  }

  private async startOnce(): Promise<void> {
    await this.engine.recovered();
    await this.sessions.endLeftovers();
    await this.vms.fillPool();
  }

  /** Ends every session (server shutdown) and the driver's listener. */
  async close(): Promise<void> {
    this.timers.clear();
    await this.sessions.endAll();
    await this.driver.close();
  }

  /** Whether this process drives the session's page (cluster routing sends its calls here, not elsewhere). */
  holds(sessionId: string): boolean {
    return this.sessions.holds(sessionId);
  }

  /** Idle browser VMs in the warm pool of this node. */
  pooledVms(): Promise<number> {
    return this.vms.pooledVms();
  }

  // Sessions

  createSession(principal: Principal, request: Wire.BrowserSessionCreateRequest) {
    return this.sessions.create(principal, request);
  }
  listSessions(principal: Principal) {
    return this.sessions.list(principal);
  }
  getSession(principal: Principal, sessionId: string) {
    return this.sessions.get(principal, sessionId);
  }
  closeSession(principal: Principal, sessionId: string) {
    return this.sessions.close(principal, sessionId);
  }

  async capabilities(principal: Principal): Promise<Wire.BrowserCapabilities> {
    return {
      engine: 'chromium',
      version: this.driver.version() ?? 'unknown until the first session',
      interactions: [...BROWSER_INTERACTIONS],
      screenshot_formats: [...SCREENSHOT_FORMATS],
      wait_conditions: [...WAIT_CONDITIONS],
      wait_until: [...WAIT_UNTIL],
      max_viewport: { width: VIEWPORT.maxWidth, height: VIEWPORT.maxHeight },
      default_viewport: this.options.defaultViewport,
      idle_timeout_seconds: this.options.idleTimeoutSeconds,
      max_session_seconds: this.options.maxSessionSeconds,
      max_sessions: this.limiter.limitsOf(principal).maxBrowserSessions,
      warm_pool_size: this.options.poolSize,
    };
  }

  async authTest(principal: Principal): Promise<Wire.BrowserAuthTestResponse> {
    const unavailable = this.vms.unavailableReason();
    return {
      success: true,
      authenticated: true,
      user_id: principal.userId,
      username: principal.username,
      plan: principal.plan,
      browser_available: unavailable === null,
      message:
        unavailable === null
          ? `authenticated as ${principal.username}; the browser service is available`
          : `authenticated as ${principal.username}; the browser is unavailable: ${unavailable}`,
    };
  }

  // Interactions (methods the cluster router calls by name on the node that holds the session)

  navigate(principal: Principal, request: Wire.BrowserNavigateRequest) {
    return this.interactions.navigate(principal, request);
  }
  click(principal: Principal, request: Wire.BrowserClickRequest) {
    return this.interactions.click(principal, request);
  }
  type(principal: Principal, request: Wire.BrowserTypeRequest) {
    return this.interactions.type(principal, request);
  }
  fill(principal: Principal, request: Wire.BrowserFillRequest) {
    return this.interactions.fill(principal, request);
  }
  scroll(principal: Principal, request: Wire.BrowserScrollRequest) {
    return this.interactions.scroll(principal, request);
  }
  wait(principal: Principal, request: Wire.BrowserWaitRequest) {
    return this.interactions.wait(principal, request);
  }
  hover(principal: Principal, request: Wire.BrowserTargetRequest) {
    return this.interactions.hover(principal, request);
  }
  keypress(principal: Principal, request: Wire.BrowserKeyPressRequest) {
    return this.interactions.keypress(principal, request);
  }
  screenshot(principal: Principal, request: Wire.BrowserScreenshotRequest) {
    return this.interactions.screenshot(principal, request);
  }
  extract(principal: Principal, request: Wire.BrowserExtractRequest) {
    return this.interactions.extract(principal, request);
  }
  content(principal: Principal, request: Wire.BrowserContentRequest) {
    return this.interactions.content(principal, request);
  }
  fillCredential(principal: Principal, request: Wire.BrowserFillCredentialRequest) {
    return this.credentials.fill(principal, request);
  }

  // Renders and usage

  render(principal: Principal, request: Wire.BrowserRenderRequest) {
    return this.renders.render(principal, request);
  }
  usage(principal: Principal) {
    return this.usageRecords.summary(principal);
  }
  usageHistory(principal: Principal, page: { limit: number; offset: number }) {
    return this.usageRecords.history(principal, page);
  }
  storedScreenshot(principal: Principal, usageId: number) {
    return this.usageRecords.storedScreenshot(principal, usageId);
  }

  // Credentials

  createCredential(principal: Principal, request: Wire.BrowserCredentialCreateRequest) {
    return this.credentials.create(principal, request);
  }
  listCredentials(principal: Principal) {
    return this.credentials.list(principal);
  }
  getCredential(principal: Principal, credentialId: string) {
    return this.credentials.get(principal, credentialId);
  }
  updateCredential(principal: Principal, credentialId: string, request: Wire.BrowserCredentialUpdateRequest) {
    return this.credentials.update(principal, credentialId, request);
  }
  deleteCredential(principal: Principal, credentialId: string) {
    return this.credentials.delete(principal, credentialId);
  }
}
