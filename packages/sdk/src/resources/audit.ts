/** GET /v1/audit/events: security-relevant actions (yours; everyone's for an administrator). */
import type { AuditEventList } from '../api-types.ts';
import type { Transport } from '../transport.ts';

export class Audit {
  constructor(private readonly transport: Transport) {}

  list(options: { limit?: number; status?: 'success' | 'failure'; action?: string; cursor?: string } = {}): Promise<AuditEventList> {
    return this.transport.call('/v1/audit/events', 'get', {
      query: { limit: options.limit, status: options.status, action: options.action, cursor: options.cursor },
    });
  }
}
