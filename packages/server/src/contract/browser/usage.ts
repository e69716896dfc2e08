/** Browser usage on the wire: the totals, the per-render and per-session records, and stored screenshots. */
import { Type, type Static } from 'typebox';
import { DateTime, ListOffset, StringEnum, StringOrNull } from '../kit.ts';
import { SCREENSHOT_FORMATS } from './common.ts';

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
export type BrowserUsageSummary = Static<typeof BrowserUsageSummary>;

export const USAGE_KINDS = ['render', 'session'] as const;
export const USAGE_STATUSES = ['ok', 'failed', 'active'] as const;

export const BrowserUsageRecord = Type.Object(
  {
    usage_id: Type.Integer(),
    kind: StringEnum(USAGE_KINDS),
    session_id: StringOrNull,
    url: StringOrNull,
    status: StringEnum(USAGE_STATUSES),
    error: StringOrNull,
    pages: Type.Integer(),
    screenshots: Type.Integer(),
    duration_seconds: Type.Number(),
    has_screenshot: Type.Boolean({ description: 'A screenshot is stored (`GET /v1/browser/screenshot/{usage_id}`)' }),
    created_at: DateTime,
  },
  { $id: 'BrowserUsageRecord', title: 'BrowserUsageRecord', description: 'One per render and per browser session' },
);
export type BrowserUsageRecord = Static<typeof BrowserUsageRecord>;

export const BrowserUsageHistory = Type.Object(
  {
    items: Type.Array(Type.Ref('BrowserUsageRecord') as unknown as typeof BrowserUsageRecord),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'BrowserUsageHistory', title: 'BrowserUsageHistory' },
);
export type BrowserUsageHistory = Static<typeof BrowserUsageHistory>;

export const BrowserUsageHistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50, description: 'Records per page (1 to 1000, default 50)' }),
  offset: ListOffset,
});
export type BrowserUsageHistoryQuery = Static<typeof BrowserUsageHistoryQuery>;

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
export type BrowserStoredScreenshot = Static<typeof BrowserStoredScreenshot>;
