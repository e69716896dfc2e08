/** GET /v1/usage: your executions, VM time and CPU time per UTC day. */
import type { DailyUsageList } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

export class Usage {
  constructor(private readonly transport: Transport) {}

  /** The last `days` days (default 14, at most 90), oldest first, today last. */
  daily(options: { days?: number } & CallOptions = {}): Promise<DailyUsageList> {
    return this.transport.call('/v1/usage', 'get', { query: { days: options.days }, signal: options.signal });
  }
}
