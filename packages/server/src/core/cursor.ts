/**
 * Opaque page cursors: base64url of the last row position a page showed. Lists go newest first, so the
 * next page is every row before that position.
 */
import { badRequest } from './errors.ts';

export function encodeCursor(position: number): string {
  return Buffer.from(String(position), 'utf8').toString('base64url');
}

/** The position in a cursor from `encodeCursor`; 400 when it was not made by it. */
export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[1-9]\d{0,15}$/.test(text)) throw badRequest('cursor is not one this server returned: pass next_cursor from the previous page unchanged');
  return Number(text);
}

/** The page and the cursor of the next one, from `limit + 1` rows fetched newest first. */
export function pageOf<T>(rows: T[], limit: number, positionOf: (row: T) => number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(positionOf(last)) : null };
}

/** A row's place in a newest-first list ordered by creation time, then id (for tables without a numeric position). */
export interface TimePosition {
  createdAt: string;
  id: string;
}

/** An opaque cursor for a `TimePosition`: base64url of `<createdAt>|<id>`. */
export function encodeTimeCursor(position: TimePosition): string {
  return Buffer.from(`${position.createdAt}|${position.id}`, 'utf8').toString('base64url');
}

/** The position in a cursor from `encodeTimeCursor`; 400 when it was not made by it. */
export function decodeTimeCursor(cursor: string): TimePosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{4}-\d{2}-\d{2}T[\d:.]+Z)\|([\w-]{1,128})$/.exec(text);
  if (!match) throw badRequest("cursor is not one this server returned: pass the previous page's token unchanged");
  return { createdAt: match[1]!, id: match[2]! };
}
