/**
 * Sign-in with a password (the OAuth2 password flow, the console, the command-line login page) or, for the
 * console, an API key. Every attempt passes the throttle first (auth/sign-in-throttle.ts: 429 before any
 * password is hashed), and every password attempt is audited. A failed attempt against an existing account is
 * recorded under that account, so its owner sees it; one against an unknown username has no user id and keeps
 * the attempted name.
 */
import { invalidCredentials, type Authenticator, type Principal } from './authenticator.ts';
import type { AuditLog } from './audit.ts';
import type { AccessTokenIssuer } from './auth/access-tokens.ts';
import type { SignInThrottle } from './auth/sign-in-throttle.ts';
import type { User, UserService } from './users.ts';

/** Where a request came from, for the audit log and the throttle. */
export interface ClientInfo {
  sourceIp: string | null;
  userAgent: string | null;
}

export class SignInService {
  constructor(
    private readonly users: UserService,
    private readonly tokens: AccessTokenIssuer,
    private readonly audit: AuditLog,
    private readonly throttle: SignInThrottle,
    private readonly authenticator: Authenticator,
  ) {}

  /** The user whose password this is, or 401 INVALID_CREDENTIALS that does not say which part was wrong. */
  async checkPassword(username: string, password: string, client: ClientInfo): Promise<User> {
    const attempt = await this.throttle.begin(username, client.sourceIp);
    const user = await this.users.verifyPassword(username, password);
    if (!user) {
      // Looked up only on failure, for both known and unknown names, so timing still does not tell them apart.
      const known = await this.users.getByUsername(username);
      await this.audit.record({
        actor: { userId: known?.id ?? null, username, via: 'password', apiKeyId: null, ...client },
        action: 'auth.sign_in',
        outcome: 'failure',
        detail: { reason: known ? 'wrong_password' : 'unknown_username' },
      });
      throw invalidCredentials('Incorrect username or password');
    }
    await attempt.succeeded();
    await this.audit.record({
      actor: { userId: user.id, username: user.username, via: 'password', apiKeyId: null, ...client },
      action: 'auth.sign_in',
      outcome: 'success',
    });
    return user;
  }

  /** A bearer token for the user whose password this is (POST /v1/auth/token). */
  async signIn(username: string, password: string, client: ClientInfo): Promise<{ token: string; expiresInSeconds: number }> {
    const user = await this.checkPassword(username, password, client);
    return this.tokens.issue(user.id);
  }

  /** The principal of an API key given to sign in to the console; wrong keys count against the source address. */
  async checkApiKey(apiKey: string, client: ClientInfo): Promise<Principal> {
    const attempt = await this.throttle.begin(null, client.sourceIp);
    const principal = await this.authenticator.authenticate(apiKey, 'x-api-key');
    await attempt.succeeded();
    return principal;
  }
}
