/**
 * The web console's sessions, held by the server. Signing in creates a row (random id, user, the API key when
 * signed in with one, expiry); the session cookie carries a random 256-bit token that names the row, of which
 * only the SHA-256 is stored (as for API keys). Every request reads the row, so a revoked session (sign-out),
 * an expired one, or one whose API key was deleted or expired stops working at once.
 *
 * The CSRF token is an HMAC of the session's id under a key derived from the server's secret: bound to the
 * session, so a second session cookie (an attacker's, shadowing the victim's with a longer Path) does not match
 * the victim's CSRF token, and the server keeps no second secret per session.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { newConsoleSessionId } from '../ids.ts';
import type { Database } from '../../store/database.ts';
import { deleteEndedConsoleSessions, findLiveConsoleSession, insertConsoleSession, revokeConsoleSessionByHash } from '../../store/console-sessions-store.ts';

/** What signing in hands the browser. */
export interface StartedConsoleSession {
  /** The cookie's value: the only copy of the credential. */
  token: string;
  sessionId: string;
  csrfToken: string;
  expiresInSeconds: number;
}

/** A live session, as a request presents it. */
export interface LiveConsoleSession {
  sessionId: string;
  userId: number;
  apiKeyId: number | null;
}

// Kept apart from every other use of the server's secret (token signing, sealing).
const CSRF_KEY_INFO = 'sandboxd console csrf v1';
// Ended sessions are kept a day after they end (when and how a session ended stays visible in the store).
const ENDED_RETENTION_MS = 86_400_000;

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class ConsoleSessions {
  private readonly csrfKey: Buffer;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    serverSecret: string,
    private readonly ttlSeconds: number,
  ) {
    this.csrfKey = createHmac('sha256', serverSecret).update(CSRF_KEY_INFO).digest();
  }

  /** Starts a session for the user (signed in with `apiKeyId`, or a password when null). */
  async start(userId: number, apiKeyId: number | null): Promise<StartedConsoleSession> {
    const now = this.clock.now();
    const token = randomBytes(32).toString('base64url');
    const sessionId = newConsoleSessionId();
    // Sign-ins are rare: sweeping ended sessions here keeps the table small without a timer.
    await deleteEndedConsoleSessions(this.database.db, new Date(now.getTime() - ENDED_RETENTION_MS).toISOString());
    await insertConsoleSession(this.database.db, {
      id: sessionId,
      token_hash: hashToken(token),
      user_id: userId,
      api_key_id: apiKeyId,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.ttlSeconds * 1000).toISOString(),
      revoked_at: null,
    });
    return { token, sessionId, csrfToken: this.csrfTokenOf(sessionId), expiresInSeconds: this.ttlSeconds };
  }

  /** The live session a cookie's token names, or null (unknown, revoked, expired, or its API key is gone). */
  async find(token: string): Promise<LiveConsoleSession | null> {
    // A well-formed token is 43 base64url characters; anything else is not worth a query.
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const now = this.clock.now();
    const row = await findLiveConsoleSession(this.database.db, hashToken(token), now.toISOString());
    if (!row) return null;
    if (row.api_key_id !== null) {
      if (row.key_status !== 'active') return null;
      if (row.key_expires_at !== null && Date.parse(row.key_expires_at) <= now.getTime()) return null;
    }
    return { sessionId: row.id, userId: row.user_id, apiKeyId: row.api_key_id };
  }

  /** The CSRF token of a session: the console sends it in X-CSRF-Token with every change. */
  csrfTokenOf(sessionId: string): string {
    return createHmac('sha256', this.csrfKey).update(sessionId).digest('base64url');
  }

  /** Ends the session a cookie's token names (sign-out); true when a live one ended. */
  async revoke(token: string): Promise<boolean> {
    return revokeConsoleSessionByHash(this.database.db, hashToken(token), this.clock.now().toISOString());
  }
}
