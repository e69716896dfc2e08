/**
 * Credentials for one session, handed to a client that talks to that session alone (the E2B facade's
 * in-sandbox API: its `envdAccessToken`, and the traffic token of sandboxes whose ports are not public).
 *
 * A token is an HMAC-SHA256 of the session id under the server's auth secret, one key per purpose, so it is never
 * stored (a client that reconnects to a sandbox gets the same token again) and every node of a cluster checks it
 * alike. It grants nothing by itself: the session is read on every request and its owner's authority applies, so a
 * session that ended (or a deleted user) takes its tokens with it. Tokens carry the prefixes below, which the
 * preview proxy recognises and never forwards to a VM.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SessionTokenPurpose = 'access' | 'traffic';

export const SESSION_TOKEN_PREFIXES: Record<SessionTokenPurpose, string> = { access: 'sbx_at_', traffic: 'sbx_tt_' };

export class SessionTokens {
  constructor(private readonly secret: string) {}

  tokenFor(purpose: SessionTokenPurpose, sessionId: string): string {
    const mac = createHmac('sha256', this.secret).update(`sandboxd session ${purpose} token\0${sessionId}`).digest('base64url');
    return SESSION_TOKEN_PREFIXES[purpose] + mac;
  }

  /** Whether `given` is the session's token of that purpose (compared in constant time). */
  matches(purpose: SessionTokenPurpose, sessionId: string, given: string | undefined): boolean {
    if (!given) return false;
    const expected = Buffer.from(this.tokenFor(purpose, sessionId));
    const actual = Buffer.from(given);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }
}

/** True when a value has the shape of a session token (of any purpose). */
export function looksLikeSessionToken(value: string): boolean {
  return Object.values(SESSION_TOKEN_PREFIXES).some((prefix) => value.startsWith(prefix));
}
