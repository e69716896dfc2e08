/**
 * Signed tokens of the desktop viewer (HS256 JWTs, jose, the server's auth secret), each kind with its own
 * audience so none is accepted for another purpose (nor as an API bearer token):
 * - a **page token** in the viewer URL (`?sandboxd_token=`) opens sandboxd's own viewer page (noVNC bundled
 *   with the console, never a page of the VM) of one session's desktop on the preview path, and is exchanged
 *   there, like a share link, for
 * - a **page cookie**, scoped to that preview, with which the page reloads;
 * - a **VNC token** lets one connection reach the session's VNC server, view-only or not: in the WebSocket
 *   URL's query, and in the viewer URL's fragment (`#token=`), which no request carries, so no log holds it.
 * All are short-lived and name the session; the session's owner is checked again when they are used.
 */
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { isUuid } from '../ids.ts';

const ISSUER = 'sandboxd';
export type ViewerTokenKind = 'page' | 'page_cookie' | 'vnc';
const AUDIENCE: Record<ViewerTokenKind, string> = { page: 'sandboxd-desktop-page', page_cookie: 'sandboxd-desktop-page-cookie', vnc: 'sandboxd-desktop-vnc' };

/** What a valid token grants. */
export interface ViewerGrant {
  sessionId: string;
  viewOnly: boolean;
  expiresAt: Date;
}

export interface ViewerTokens {
  sign(kind: ViewerTokenKind, grant: ViewerGrant): Promise<string>;
  /** The grant of a valid token of that kind, or null (bad signature, expired, other kind). */
  verify(kind: ViewerTokenKind, token: string): Promise<ViewerGrant | null>;
}

export function createViewerTokens(secret: string): ViewerTokens {
  const key = new TextEncoder().encode(secret);
  return {
    async sign(kind, grant) {
      return new SignJWT({ view_only: grant.viewOnly })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(grant.sessionId)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE[kind])
        .setIssuedAt()
        .setExpirationTime(Math.floor(grant.expiresAt.getTime() / 1000))
        .sign(key);
    },
    async verify(kind, token) {
      try {
        const { payload } = await jwtVerify(token, key, { issuer: ISSUER, audience: AUDIENCE[kind], algorithms: ['HS256'] });
        if (typeof payload.sub !== 'string' || !isUuid(payload.sub) || typeof payload.exp !== 'number') return null;
        return { sessionId: payload.sub, viewOnly: payload.view_only !== false, expiresAt: new Date(payload.exp * 1000) };
      } catch (error) {
        if (error instanceof joseErrors.JOSEError) return null;
        throw error;
      }
    },
  };
}
