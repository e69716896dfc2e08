/** Persistence of browser sessions, browser usage records and browser credentials. */
import type { BrowserCredentialRow, BrowserSessionRow, BrowserUsageRow } from './schema.ts';
import type { Executor } from './database.ts';

export type { BrowserCredentialRow, BrowserSessionRow, BrowserUsageRow };

export async function insertBrowserSession(db: Executor, row: BrowserSessionRow): Promise<void> {
  await db.insertInto('browser_sessions').values(row).execute();
}

export async function findBrowserSession(db: Executor, id: string): Promise<BrowserSessionRow | undefined> {
  return db.selectFrom('browser_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The user's sessions in `statuses`, newest first. */
export async function listBrowserSessions(db: Executor, userId: number, statuses: readonly string[]): Promise<BrowserSessionRow[]> {
  return db
    .selectFrom('browser_sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('status', 'in', statuses)
    .orderBy('created_at', 'desc')
    .limit(1000)
    .execute();
}

export async function countActiveBrowserSessions(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('browser_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Active sessions recorded on `nodeId` (what a restarted node must end). */
export async function activeBrowserSessionsOnNode(db: Executor, nodeId: string): Promise<BrowserSessionRow[]> {
  return db.selectFrom('browser_sessions').selectAll().where('node_id', '=', nodeId).where('status', '=', 'active').execute();
}

export async function updateBrowserSession(db: Executor, id: string, changes: Partial<Omit<BrowserSessionRow, 'id' | 'user_id'>>): Promise<void> {
  await db.updateTable('browser_sessions').set(changes).where('id', '=', id).execute();
}

/** Ends an active session; false when it was not active any more (someone else ended it). */
export async function endBrowserSession(
  db: Executor,
  id: string,
  end: { status: string; endReason: string; closedAt: string; url: string; pages: number; screenshots: number; lastActivity: string },
): Promise<boolean> {
  const result = await db
    .updateTable('browser_sessions')
    .set({
      status: end.status,
      end_reason: end.endReason,
      closed_at: end.closedAt,
      url: end.url,
      pages_visited: end.pages,
      screenshots_taken: end.screenshots,
      last_activity: end.lastActivity,
    })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertBrowserUsage(db: Executor, row: Omit<BrowserUsageRow, 'id'>): Promise<number> {
  const inserted = await db.insertInto('browser_usage').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(inserted.id);
}

export async function updateBrowserUsage(db: Executor, id: number, changes: Partial<Omit<BrowserUsageRow, 'id' | 'user_id'>>): Promise<void> {
  await db.updateTable('browser_usage').set(changes).where('id', '=', id).execute();
}

export async function findBrowserUsage(db: Executor, id: number): Promise<BrowserUsageRow | undefined> {
  return db.selectFrom('browser_usage').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listBrowserUsage(db: Executor, userId: number, limit: number, offset: number): Promise<{ rows: BrowserUsageRow[]; total: number }> {
  const rows = await db.selectFrom('browser_usage').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').limit(limit).offset(offset).execute();
  const total = await db
    .selectFrom('browser_usage')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return { rows, total: Number(total.n) };
}

export interface BrowserUsageTotals {
  renders: number;
  sessions: number;
  pages: number;
  screenshots: number;
  durationMs: number;
}

/** The user's usage since `since` (all time when null). */
export async function browserUsageTotals(db: Executor, userId: number, since: string | null): Promise<BrowserUsageTotals> {
  let query = db
    .selectFrom('browser_usage')
    .select((eb) => [
      eb.fn.sum<number>(eb.case().when('kind', '=', 'render').then(1).else(0).end()).as('renders'),
      eb.fn.sum<number>(eb.case().when('kind', '=', 'session').then(1).else(0).end()).as('sessions'),
      eb.fn.coalesce(eb.fn.sum<number>('pages'), eb.lit(0)).as('pages'),
      eb.fn.coalesce(eb.fn.sum<number>('screenshots'), eb.lit(0)).as('screenshots'),
      eb.fn.coalesce(eb.fn.sum<number>('duration_ms'), eb.lit(0)).as('duration_ms'),
    ])
    .where('user_id', '=', userId);
  if (since !== null) query = query.where('created_at', '>=', since);
  const row = await query.executeTakeFirstOrThrow();
  return {
    renders: Number(row.renders ?? 0),
    sessions: Number(row.sessions ?? 0),
    pages: Number(row.pages),
    screenshots: Number(row.screenshots),
    durationMs: Number(row.duration_ms),
  };
}

/** Usage rows whose screenshot was written before `before` (retention), at most `limit`. */
export async function usageWithScreenshotsBefore(db: Executor, before: string, limit: number): Promise<{ id: number; screenshot_key: string }[]> {
  const rows = await db
    .selectFrom('browser_usage')
    .select(['id', 'screenshot_key'])
    .where('screenshot_key', 'is not', null)
    .where('created_at', '<', before)
    .limit(limit)
    .execute();
  return rows.map((row) => ({ id: row.id, screenshot_key: row.screenshot_key! }));
}

export async function insertBrowserCredential(db: Executor, row: BrowserCredentialRow): Promise<void> {
  await db.insertInto('browser_credentials').values(row).execute();
}

export async function findBrowserCredential(db: Executor, id: string): Promise<BrowserCredentialRow | undefined> {
  return db.selectFrom('browser_credentials').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findBrowserCredentialByName(db: Executor, userId: number, name: string): Promise<BrowserCredentialRow | undefined> {
  return db.selectFrom('browser_credentials').selectAll().where('user_id', '=', userId).where('name', '=', name).executeTakeFirst();
}

export async function listBrowserCredentials(db: Executor, userId: number): Promise<BrowserCredentialRow[]> {
  return db.selectFrom('browser_credentials').selectAll().where('user_id', '=', userId).orderBy('created_at', 'asc').orderBy('id', 'asc').limit(1000).execute();
}

export async function updateBrowserCredential(db: Executor, id: string, changes: Partial<Omit<BrowserCredentialRow, 'id' | 'user_id'>>): Promise<void> {
  await db.updateTable('browser_credentials').set(changes).where('id', '=', id).execute();
}

export async function deleteBrowserCredential(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('browser_credentials').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
