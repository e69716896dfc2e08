/**
 * Signed, expiring bearer tokens for the OAuth2 password flow: HS256 JWTs (jose) whose subject is the
 * user id. The signing secret is shared by every node (config or the store).
 */
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';

const ISSUER = 'sandboxd';
const AUDIENCE = 'sandboxd-api';

export interface AccessTokenIssuer {
  issue(userId: number): Promise<{ token: string; expiresInSeconds: number }>;
  /** The user id of a valid token, or null for an invalid, expired or foreign one. */
  verify(token: string): Promise<number | null>;
}

/** Creates an issuer signing with `secret`; tokens live `ttlSeconds`. */
export function createAccessTokenIssuer(secret: string, ttlSeconds: number): AccessTokenIssuer {
  const key = new TextEncoder().encode(secret);
  return {
    async issue(userId) {
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(userId))
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(key);
      return { token, expiresInSeconds: ttlSeconds };
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
        const userId = Number(payload.sub);
        return Number.isSafeInteger(userId) && userId > 0 ? userId : null;
      } catch (error) {
        if (error instanceof joseErrors.JOSEError) return null;
        throw error;
      }
    },
  };
}
