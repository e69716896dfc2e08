/** API keys of the caller: create (the only time the full key is shown), list, get, update, delete. */
import type { ApiKeyRecord } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

export interface ApiKeyChanges {
  description?: string | null;
  /** ISO date-time, or null for a key that never expires. */
  expiresAt?: string | Date | null;
}

function body(changes: ApiKeyChanges) {
  return {
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.expiresAt !== undefined ? { expires_at: changes.expiresAt instanceof Date ? changes.expiresAt.toISOString() : changes.expiresAt } : {}),
  };
}

export class ApiKeys {
  constructor(private readonly transport: Transport) {}

  /**
   * Creates a key; `full_key` in the answer is the key itself, shown this once. `format: 'e2b'` makes it look like
   * E2B's (`e2b_` + 40 hex digits) for tools that check; it works on both APIs like any key.
   */
  async create(changes: ApiKeyChanges & { format?: 'sandboxd' | 'e2b' } = {}, options: CallOptions = {}): Promise<ApiKeyRecord & { full_key: string }> {
    const json = { ...body(changes), ...(changes.format ? { format: changes.format } : {}) };
    return (await this.transport.call('/v1/api-keys/', 'post', { json, signal: options.signal })) as ApiKeyRecord & { full_key: string };
  }

  async list(options: CallOptions = {}): Promise<ApiKeyRecord[]> {
    return this.transport.call('/v1/api-keys/', 'get', { signal: options.signal });
  }

  async get(id: number, options: CallOptions = {}): Promise<ApiKeyRecord> {
    return this.transport.call('/v1/api-keys/{item_id}', 'get', { params: { item_id: id }, signal: options.signal });
  }

  async update(id: number, changes: ApiKeyChanges, options: CallOptions = {}): Promise<ApiKeyRecord> {
    return this.transport.call('/v1/api-keys/{item_id}', 'patch', { params: { item_id: id }, json: body(changes), signal: options.signal });
  }

  /** Deletes a key: it stops working at once. */
  async delete(id: number, options: CallOptions = {}) {
    return this.transport.call('/v1/api-keys/{item_id}', 'delete', { params: { item_id: id }, signal: options.signal });
  }

  /** HEAD /v1/api-keys/: true when the credentials work (throws AuthenticationError when they do not). */
  async check(options: CallOptions = {}): Promise<true> {
    await this.transport.call('/v1/api-keys/', 'head', { signal: options.signal });
    return true;
  }
}
