/** GET /v1/audit/events: security-relevant actions (yours; everyone's for an administrator). */
import type { AuditEventList } from '../api-types.ts';
import type { Transport } from '../transport.ts';
import { cursorPages, type PagedList } from '../pagination.ts';

export class Audit {
  constructor(private readonly transport: Transport) {}

  /** Newest first: await it for a page (with `next_cursor`), or `for await` over every event of every page. */
  list(
    options: { limit?: number; status?: 'success' | 'failure'; action?: string; cursor?: string; signal?: AbortSignal } = {},
  ): PagedList<AuditEventList['items'][number], AuditEventList> {
    return cursorPages(
      options.cursor,
      (cursor) =>
        this.transport.call('/v1/audit/events', 'get', {
          query: { limit: options.limit, status: options.status, action: options.action, cursor },
          signal: options.signal,
        }),
      (page) => page.items,
    );
  }
}
