/**
 * API key material. Keys are `sbx_sk_` + 43 base64url characters (256 random bits). Only a SHA-256 of
 * the key is stored: with that much entropy a slow hash adds nothing, and a fast one lets every request
 * look its key up by index.
 */
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'sbx_sk_';
/** How many characters of a key its `key_prefix` shows: the scheme plus 8 random characters. */
const VISIBLE_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;

export interface NewApiKeySecret {
  fullKey: string;
  keyHash: string;
  keyPrefix: string;
}

/** Makes a new random key with its stored hash and visible prefix. */
export function generateApiKeySecret(): NewApiKeySecret {
  const fullKey = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { fullKey, keyHash: hashApiKey(fullKey), keyPrefix: fullKey.slice(0, VISIBLE_PREFIX_LENGTH) };
}

/** The stored form of a key. */
export function hashApiKey(fullKey: string): string {
  return createHash('sha256').update(fullKey).digest('hex');
}

/** True when a credential looks like one of our API keys (as opposed to a signed bearer token). */
export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}
