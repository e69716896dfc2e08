/**
 * Browser usage: a record per render and per session (a session's is written when it ends; until then its
 * counts are in memory, `BrowserSessions.liveOf`), the totals, and the renders' stored screenshots, deleted past
 * their retention.
 */
import type * as Wire from '../../contract/browser/index.ts';
import { AppError, notFound } from '../errors.ts';
import type { Principal } from '../authenticator.ts';
import type { Clock } from '../clock.ts';
import type { PlanLimiter } from '../limits.ts';
import type { Database } from '../../store/database.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import {
  browserUsageTotals,
  countActiveBrowserSessions,
  findBrowserUsage,
  listBrowserUsage,
  updateBrowserUsage,
  usageWithScreenshotsBefore,
  type BrowserUsageRow,
} from '../../store/browser-store.ts';
import type { BrowserSessions } from './sessions.ts';
import { seconds } from './timing.ts';

const DAY_MS = 86_400_000;

export class BrowserUsage {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly limiter: PlanLimiter,
    private readonly objects: ObjectStore,
    private readonly sessions: BrowserSessions,
    /** Stored screenshots older than this are deleted (0: kept). */
    private readonly screenshotRetentionDays: number,
  ) {}

  async summary(principal: Principal): Promise<Wire.BrowserUsageSummary> {
    const since = new Date(this.clock.now().getTime() - 30 * DAY_MS).toISOString();
    const [all, recent, active] = await Promise.all([
      browserUsageTotals(this.database.db, principal.userId, null),
      browserUsageTotals(this.database.db, principal.userId, since),
      countActiveBrowserSessions(this.database.db, principal.userId),
    ]);
    const live = this.sessions.liveOf(principal.userId);
    // Open sessions count what they did so far (their usage rows are written when they end).
    const extra = {
      pages: sum(live.map((s) => s.pages)),
      screenshots: sum(live.map((s) => s.screenshots)),
      ms: sum(live.map((s) => this.clock.now().getTime() - Date.parse(s.row.created_at))),
    };
    const totals = (t: typeof all) => ({
      renders: t.renders,
      sessions: t.sessions,
      pages: t.pages + extra.pages,
      screenshots: t.screenshots + extra.screenshots,
      total_seconds: seconds(t.durationMs + extra.ms),
    });
    return {
      user_id: principal.userId,
      ...totals(all),
      active_sessions: active,
      max_sessions: this.limiter.limitsOf(principal).maxBrowserSessions,
      last_30_days: totals(recent),
    };
  }

  async history(principal: Principal, page: { limit: number; offset: number }): Promise<Wire.BrowserUsageHistory> {
    const { rows, total } = await listBrowserUsage(this.database.db, principal.userId, page.limit, page.offset);
    return { items: rows.map(toUsageRecord), total, limit: page.limit, offset: page.offset };
  }

  async storedScreenshot(principal: Principal, usageId: number): Promise<Wire.BrowserStoredScreenshot> {
    const row = await findBrowserUsage(this.database.db, usageId);
    if (!row || row.user_id !== principal.userId) throw notFound(`browser usage record ${usageId}`);
    if (!row.screenshot_key || !row.screenshot_format)
      throw new AppError(
        'NOT_FOUND',
        `usage record ${usageId} has no stored screenshot (only renders with a screenshot keep one, and only for ${this.screenshotRetentionDays} days)`,
      );
    const stored = await this.objects.get(row.screenshot_key);
    if (!stored) throw new AppError('NOT_FOUND', `the screenshot of usage record ${usageId} is no longer kept`);
    const expiresAt = this.screenshotRetentionDays > 0 ? new Date(Date.parse(row.created_at) + this.screenshotRetentionDays * DAY_MS).toISOString() : null;
    return {
      usage_id: usageId,
      format: row.screenshot_format as Wire.ScreenshotFormat,
      content_type: stored.contentType,
      screenshot: stored.body.toString('base64'),
      bytes: stored.body.length,
      created_at: row.created_at,
      expires_at: expiresAt,
    };
  }

  /** Whether stored screenshots expire (and `pruneScreenshots` has work to do). */
  get retains(): boolean {
    return this.screenshotRetentionDays > 0;
  }

  /** Deletes stored screenshots older than the retention and forgets their keys. */
  async pruneScreenshots(): Promise<void> {
    const before = new Date(this.clock.now().getTime() - this.screenshotRetentionDays * DAY_MS).toISOString();
    for (;;) {
      const rows = await usageWithScreenshotsBefore(this.database.db, before, 500);
      if (rows.length === 0) return;
      for (const row of rows) {
        await this.objects.delete(row.screenshot_key);
        await updateBrowserUsage(this.database.db, row.id, { screenshot_key: null });
      }
    }
  }
}

function toUsageRecord(row: BrowserUsageRow): Wire.BrowserUsageRecord {
  return {
    usage_id: row.id,
    kind: row.kind as Wire.BrowserUsageRecord['kind'],
    session_id: row.session_id,
    url: row.url,
    status: row.status as Wire.BrowserUsageRecord['status'],
    error: row.error,
    pages: row.pages,
    screenshots: row.screenshots,
    duration_seconds: seconds(row.duration_ms),
    has_screenshot: row.screenshot_key !== null,
    created_at: row.created_at,
  };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
