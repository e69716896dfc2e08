/**
 * Signed tokens of the preview proxy (HS256 JWTs, jose, signed with the server's auth secret):
 * - a **link token** travels in a private share's URL (`?sandboxd_token=`); it proves the holder was given the
 *   link and is exchanged, on first use, for
 * - a **cookie token**, kept in an HttpOnly cookie scoped to the one preview.
 * Both name the share; the share row is still read on every request, so deleting it revokes both at once.
 * Each kind has its own audience, and neither is accepted as an API bearer token.
 */
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';

const ISSUER = 'sandboxd';
export type PreviewTokenKind = 'link' | 'cookie';
const AUDIENCE: Record<PreviewTokenKind, string> = { link: 'sandboxd-preview-link', cookie: 'sandboxd-preview-cookie' };

export interface PreviewTokens {
  sign(kind: PreviewTokenKind, shareId: string, expiresAt: Date): Promise<string>;
  /** The share id of a valid token of that kind, or null (bad signature, expired, other kind). */
  verify(kind: PreviewTokenKind, token: string): Promise<string | null>;
}

export function createPreviewTokens(secret: string): PreviewTokens {
  const key = new TextEncoder().encode(secret);
  return {
    async sign(kind, shareId, expiresAt) {
      return new SignJWT({})
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(shareId)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE[kind])
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key);
    },
    async verify(kind, token) {
      try {
        const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE[kind], algorithms: ['HS256'] });
        return typeof payload.sub === 'string' && payload.sub.startsWith('shr_') ? payload.sub : null;
      } catch (error) {
        if (error instanceof joseErrors.JOSEError) return null;
        throw error;
      }
    },
  };
}
