/**
 * Password sign-in (the OAuth2 password flow): checks the password, issues a bearer token, and audits
 * every attempt. A failed attempt against an existing account is recorded under that account, so its
 * owner sees it; one against an unknown username has no user id and keeps the attempted name.
 */
import { invalidCredentials } from './authenticator.ts';
import type { AuditLog } from './audit.ts';
import type { AccessTokenIssuer } from './auth/access-tokens.ts';
import type { UserService } from './users.ts';

/** Where a request came from, for the audit log. */
export interface ClientInfo {
  sourceIp: string | null;
  userAgent: string | null;
}

export class SignInService {
  constructor(
    private readonly users: UserService,
    private readonly tokens: AccessTokenIssuer,
    private readonly audit: AuditLog,
  ) {}

  /** A bearer token for the user, or 401 INVALID_CREDENTIALS that does not say which part was wrong. */
  async signIn(username: string, password: string, client: ClientInfo): Promise<{ token: string; expiresInSeconds: number }> {
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
    const issued = await this.tokens.issue(user.id);
    await this.audit.record({
      actor: { userId: user.id, username: user.username, via: 'password', apiKeyId: null, ...client },
      action: 'auth.sign_in',
      outcome: 'success',
    });
    return issued;
  }
}
