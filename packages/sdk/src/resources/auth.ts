/** POST /v1/auth/token: a bearer token for a username and password (pass it as `accessToken`). */
import type { TokenResponse } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

export class Auth {
  constructor(private readonly transport: Transport) {}

  async token(credentials: { username: string; password: string }, options: CallOptions = {}): Promise<TokenResponse> {
    return this.transport.call('/v1/auth/token', 'post', {
      json: { username: credentials.username, password: credentials.password, grant_type: 'password' },
      anonymous: true,
      signal: options.signal,
    });
  }
}
