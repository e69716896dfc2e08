/**
 * Recognizes a sandboxd credential by its shape alone, without a store lookup or a signature check: an API key
 * (`sbx_sk_…`), a session token (`sbx_at_…`, `sbx_tt_…`) or a JWT that sandboxd issued (`iss: "sandboxd"`: access tokens, share and viewer tokens). The
 * preview proxy uses it to decide what never reaches a VM, where a false positive only costs an app a header
 * and a false negative would hand the VM an account: so any token that merely claims sandboxd as its issuer
 * counts, signed by this deployment or not.
 */
import { decodeJwt } from 'jose';
import { looksLikeApiKey } from './api-key-secrets.ts';
import { looksLikeSessionToken } from './session-tokens.ts';

/** The `iss` of every JWT sandboxd signs (core/auth/access-tokens.ts, preview-tokens.ts, viewer-tokens.ts). */
const SANDBOXD_ISSUER = 'sandboxd';
/** A compact JWS and nothing else: three base64url parts (a cookie header holding a JWT among other pairs is not one). */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** True when `value` is an API key or a JWT whose (unverified) issuer is sandboxd. */
export function looksLikeSandboxdCredential(value: string): boolean {
  const credential = value.trim();
  if (looksLikeApiKey(credential) || looksLikeSessionToken(credential)) return true;
  // Three base64url parts; decoding a non-JWT throws, which answers "not ours".
  if (!JWT_SHAPE.test(credential)) return false;
  try {
    return decodeJwt(credential).iss === SANDBOXD_ISSUER;
  } catch {
    return false;
  }
}
