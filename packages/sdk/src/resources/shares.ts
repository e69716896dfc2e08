/** Shares: open a port of a session to others (public, or through signed expiring links). */
import type { Share } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { secondsField } from '../durations.ts';

export interface ShareCreateOptions extends CallOptions {
  sessionId: string;
  /** The port in the VM, 1 to 65535. */
  port: number;
  /** true: anyone may open it; false (default): only holders of the signed link in the answer's `url`. */
  isPublic?: boolean;
  /** Revoke it by itself after this many milliseconds, rounded up to whole seconds (60 s to 30 days); default: until deleted. */
  expiresInMs?: number;
  /** @deprecated Use `expiresInMs` (milliseconds, like every duration of this client). */
  expiresInSeconds?: number;
}

export class Shares {
  constructor(private readonly transport: Transport) {}

  /** Shares a port; a private share's `url` carries a signed link that sets a cookie on first use. */
  create(options: ShareCreateOptions): Promise<Share> {
    return this.transport.call('/v1/shares', 'post', {
      json: {
        session_id: options.sessionId,
        port: options.port,
        is_public: options.isPublic ?? false,
        ...secondsField('expires_in_seconds', options.expiresInMs, options.expiresInSeconds, ['expiresInMs', 'expiresInSeconds']),
      },
      signal: options.signal,
    });
  }

  /** Your shares, newest first; `sessionId` narrows to one session. */
  async list(options: { sessionId?: string } & CallOptions = {}): Promise<Share[]> {
    return (await this.transport.call('/v1/shares', 'get', { query: { session_id: options.sessionId }, signal: options.signal })).shares;
  }

  /** A share (private ones with a fresh signed link). */
  get(shareId: string, options: CallOptions = {}): Promise<Share> {
    return this.transport.call('/v1/shares/{share_id}', 'get', { params: { share_id: shareId }, signal: options.signal });
  }

  /** Revokes a share at once: its links and cookies stop working. */
  delete(shareId: string, options: CallOptions = {}): Promise<Share> {
    return this.transport.call('/v1/shares/{share_id}', 'delete', { params: { share_id: shareId }, signal: options.signal });
  }
}
