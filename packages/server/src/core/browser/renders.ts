/**
 * One-shot renders: a VM for the one page (from the warm pool when it has one), the page loaded from a URL or
 * inline HTML, the request's actions run in order (`page-actions.ts`, as the interactions of the same names), a
 * screenshot stored for the usage record, and the VM killed after, whatever happened. A render counts against
 * the plan's browser sessions while it runs.
 */
import type * as Wire from '../../contract/browser/index.ts';
import { DEFAULT_TIMEOUT_MS } from '../../contract/browser/index.ts';
import type { Principal } from '../authenticator.ts';
import type { Clock } from '../clock.ts';
import { newVmId } from '../ids.ts';
import { lockUser } from '../user-lock.ts';
import type { VmEngine } from '../vm-engine.ts';
import type { Database } from '../../store/database.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import { insertBrowserUsage, updateBrowserUsage } from '../../store/browser-store.ts';
import type { BrowserPage, Screenshot, Viewport } from './browser-driver.ts';
import type { BrowserVms } from './browser-vms.ts';
import { checkPageUrl, runRenderAction } from './page-actions.ts';
import { seconds } from './timing.ts';

/** Where renders' screenshots are stored: `<prefix>/<user id>/<usage id>.<png|jpg>`. */
const SCREENSHOT_PREFIX = 'browser/screenshots';
/** A render's VM outlives its loading deadline by this much at most (actions, screenshot, reading the page). */
const RENDER_VM_EXTRA_SECONDS = 300;

export class BrowserRenders {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly engine: VmEngine,
    private readonly objects: ObjectStore,
    private readonly vms: BrowserVms,
    /** The service's start (leftovers ended, pool filling), awaited before the first render. */
    private readonly ready: () => Promise<void>,
    private readonly defaultViewport: Viewport,
  ) {}

  async render(principal: Principal, request: Wire.BrowserRenderRequest): Promise<Wire.BrowserRenderResponse> {
    // The route took exactly one of url and html; the URLs are checked before any VM is started.
    const url = typeof request.url === 'string' && request.url !== '' ? checkPageUrl(request.url, ['body', 'url']) : null;
    const actions = request.actions ?? [];
    for (const [index, action] of actions.entries()) if (action.type === 'navigate') checkPageUrl(action.url, ['body', 'actions', index, 'url']);
    const viewport = { width: request.width ?? this.defaultViewport.width, height: request.height ?? this.defaultViewport.height };
    const format = request.format ?? 'png';
    const waitTimeoutMs = request.wait_timeout ?? DEFAULT_TIMEOUT_MS;
    await this.ready();
    await this.database.db.transaction().execute(async (trx) => {
      await lockUser(trx, this.database.dialect, principal.userId);
      await this.vms.assertQuota(trx, principal);
      // Counted before the transaction ends, so a second render checking the quota sees this one.
      this.vms.renderStarted(principal.userId);
    });
    const started = performance.now();
    const createdAt = this.clock.now().toISOString();
    let usageId = 0;
    const vmId = newVmId();
    let page: BrowserPage | undefined;
    let pages = 0;
    try {
      usageId = await insertBrowserUsage(this.database.db, {
        user_id: principal.userId,
        kind: 'render',
        session_id: null,
        url: url ?? 'about:blank (html)',
        status: 'active',
        error: null,
        pages: 0,
        screenshots: 0,
        duration_ms: 0,
        screenshot_key: null,
        screenshot_format: null,
        screenshot_bytes: null,
        created_at: createdAt,
      });
      page = await this.vms.openPage(vmId, Math.ceil(waitTimeoutMs / 1000) + RENDER_VM_EXTRA_SECONDS, viewport, request.user_agent ?? null);
      page.onNavigated(() => (pages += 1));
      const deadline = Date.now() + waitTimeoutMs;
      const left = () => Math.max(1, deadline - Date.now());
      let status: number | null = null;
      if (url) status = (await page.navigate(url, { timeoutMs: left(), waitUntil: request.wait_until ?? 'load' })).status;
      else await page.setContent(request.html!, { timeoutMs: left(), waitUntil: request.wait_until ?? 'load' });
      if (request.wait_for_selector) await page.wait('selector', { selector: request.wait_for_selector, timeoutMs: left() });
      for (const [index, action] of actions.entries()) await runRenderAction(page, action, ['body', 'actions', index]);
      let shot: Screenshot | null = null;
      if (request.return_screenshot !== false) {
        shot = await page.screenshot({
          fullPage: request.full_page ?? false,
          format,
          clip: request.clip ?? null,
          quality: request.quality ?? null,
          timeoutMs: DEFAULT_TIMEOUT_MS,
        });
      }
      const html = request.return_html ? await page.html() : null;
      const text = request.return_text ? await page.text() : null;
      const title = await page.title();
      const finalUrl = page.url();
      let key: string | null = null;
      if (shot) {
        key = `${SCREENSHOT_PREFIX}/${principal.userId}/${usageId}.${format === 'png' ? 'png' : 'jpg'}`;
        await this.objects.put(key, shot.bytes, { contentType: format === 'png' ? 'image/png' : 'image/jpeg' });
      }
      const durationMs = Math.round(performance.now() - started);
      await updateBrowserUsage(this.database.db, usageId, {
        status: 'ok',
        url: url ?? finalUrl,
        pages: Math.max(pages, 1),
        screenshots: shot ? 1 : 0,
        duration_ms: durationMs,
        screenshot_key: key,
        screenshot_format: shot ? format : null,
        screenshot_bytes: shot ? shot.bytes.length : null,
      });
      return {
        success: true,
        usage_id: usageId,
        url: finalUrl,
        title,
        status_code: status,
        screenshot: shot ? shot.bytes.toString('base64') : null,
        format: shot ? format : null,
        width: shot?.width ?? viewport.width,
        height: shot?.height ?? viewport.height,
        html,
        text,
        execution_time: seconds(durationMs),
        screenshot_url: shot ? `/v1/browser/screenshot/${usageId}` : null,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (usageId)
        await updateBrowserUsage(this.database.db, usageId, {
          status: 'failed',
          error: message.slice(0, 2000),
          pages,
          duration_ms: Math.round(performance.now() - started),
        }).catch(() => undefined);
      throw error;
    } finally {
      await page?.close().catch(() => undefined);
      await this.engine.kill(vmId).catch(() => undefined);
      this.vms.renderEnded(principal.userId);
    }
  }
}
