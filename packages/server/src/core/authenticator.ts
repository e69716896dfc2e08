/**
 * Turns a credential (API key, bearer token, or the web console's session cookie) into the principal a request
 * acts as. Keys that are deleted or past their expiry, and console sessions that were revoked, stop working at
 * once: every request reads the key's or the session's current row.
 */
import { AppError } from './errors.ts';
import { hashApiKey, looksLikeApiKey } from './auth/api-key-secrets.ts';
import type { AccessTokenIssuer } from './auth/access-tokens.ts';
import type { ConsoleSessions } from './auth/console-sessions.ts';
import type { Clock } from './clock.ts';
import type { Session } from '../model.ts';
import type { Database } from '../store/database.ts';
import { findApiKeyByHash, touchApiKey } from '../store/api-keys-store.ts';
import { findUserById } from '../store/users-store.ts';

/** Who a request acts as. */
export interface Principal {
  userId: number;
  username: string;
  plan: string;
  isAdmin: boolean;
  /** How the caller authenticated: an API key, an access token, or (the SSH gateway) an SSH key. */
  via: 'api_key' | 'access_token' | 'ssh_key' | 'session_token';
  /** The key used, when `via` is 'api_key'. */
  apiKeyId: number | null;
}

/** Where the credential came from; only used to word errors. */
export type CredentialSource = 'x-api-key' | 'bearer' | 'api_key field';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };
// Writing last_used_at on every request would turn every read into a write; a minute's precision is enough.
const TOUCH_INTERVAL_MS = 60_000;

export function notAuthenticated(): AppError {
  return new AppError(
    'NOT_AUTHENTICATED',
    'Not authenticated: send an API key in the X-API-Key header (or as Authorization: Bearer <key>), or a bearer token from POST /v1/auth/token',
    CHALLENGE,
  );
}

export function invalidCredentials(message: string): AppError {
  return new AppError('INVALID_CREDENTIALS', message, CHALLENGE);
}

export class Authenticator {
  private readonly lastTouch = new Map<number, number>();

  constructor(
    private readonly database: Database,
    private readonly tokens: AccessTokenIssuer,
    private readonly clock: Clock,
    private readonly consoleSessions: ConsoleSessions,
  ) {}

  /**
   * The principal of a console session cookie's token and that session's CSRF token, or 401 for a token that
   * names no live session. The principal is as a bearer token's was (`access_token`).
   */
  async authenticateConsoleSession(token: string): Promise<{ principal: Principal; csrfToken: string }> {
    const session = await this.consoleSessions.find(token);
    const user = session ? await findUserById(this.database.db, session.userId) : undefined;
    if (!session || !user) throw invalidCredentials('Your console session ended (signed out, expired, or its API key was deleted): sign in again');
    return {
      principal: { userId: user.id, username: user.username, plan: user.plan, isAdmin: user.isAdmin, via: 'access_token', apiKeyId: null },
      csrfToken: this.consoleSessions.csrfTokenOf(session.sessionId),
    };
  }

  /** Resolves a credential or throws 401 with a message that does not reveal which part was wrong. */
  async authenticate(credential: string, source: CredentialSource): Promise<Principal> {
    if (source !== 'bearer' || looksLikeApiKey(credential)) return this.authenticateApiKey(credential);
    return this.authenticateAccessToken(credential);
  }

  /**
   * The principal of a session token's holder: the session's owner, as a session token (which the caller has
   * checked against that session: `SessionTokens.matches`). 401 when the owner no longer exists.
   */
  async principalOfSessionOwner(session: Session): Promise<Principal> {
    const user = await findUserById(this.database.db, session.userId);
    if (!user) throw invalidCredentials('Invalid access token');
    return { userId: user.id, username: user.username, plan: user.plan, isAdmin: user.isAdmin, via: 'session_token', apiKeyId: null };
  }

  private async authenticateApiKey(fullKey: string): Promise<Principal> {
    const db = this.database.db;
    const key = await findApiKeyByHash(db, hashApiKey(fullKey));
    const now = this.clock.now();
    if (!key || key.status !== 'active') throw invalidCredentials('Invalid API key');
    if (key.expires_at !== null && Date.parse(key.expires_at) <= now.getTime()) throw invalidCredentials('API key has expired');
    const user = await findUserById(db, key.user_id);
    if (!user) throw invalidCredentials('Invalid API key');
    const last = this.lastTouch.get(key.id) ?? 0;
    if (now.getTime() - last > TOUCH_INTERVAL_MS) {
      this.lastTouch.set(key.id, now.getTime());
      await touchApiKey(db, key.id, now.toISOString());
    }
    return { userId: user.id, username: user.username, plan: user.plan, isAdmin: user.isAdmin, via: 'api_key', apiKeyId: key.id };
  }

  private async authenticateAccessToken(token: string): Promise<Principal> {
    const userId = await this.tokens.verify(token);
    const user = userId === null ? undefined : await findUserById(this.database.db, userId);
    if (!user) throw invalidCredentials('Invalid or expired bearer token');
    return { userId: user.id, username: user.username, plan: user.plan, isAdmin: user.isAdmin, via: 'access_token', apiKeyId: null };
  }
}
