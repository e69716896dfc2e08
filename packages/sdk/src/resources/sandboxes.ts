/** GET /v1/sessions/sandboxes: your sandboxes (one per VM), newest first, filtered by session metadata. */
import type { SandboxInfo } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

export class Sandboxes {
  constructor(private readonly transport: Transport) {}

  /** `metadata`: only sandboxes whose session metadata contains every pair. `limit`: 1 to 1000 (default 100). */
  async list(options: { metadata?: Record<string, string>; limit?: number } & CallOptions = {}): Promise<SandboxInfo[]> {
    const metadata = options.metadata && Object.keys(options.metadata).length > 0 ? JSON.stringify(options.metadata) : undefined;
    return this.transport.call('/v1/sessions/sandboxes', 'get', { query: { metadata, limit: options.limit }, signal: options.signal });
  }
}
