/**
 * API key material. Keys are `sbx_sk_` + 43 base64url characters (256 random bits), or, in the `e2b` format, `e2b_`
 * + 40 hex digits (160 random bits, the shape E2B's tools check for: such a key works with both of sandboxd's APIs
 * like any other). Only a SHA-256 of the key is stored: with that much entropy a slow hash adds nothing, and a fast
 * one lets every request look its key up by index.
 */
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'sbx_sk_';
/** The formats a key can be made in: sandboxd's own, or E2B's shape (for clients of the E2B-compatible API). */
export const API_KEY_FORMATS = ['sandboxd', 'e2b'] as const;
export type ApiKeyFormat = (typeof API_KEY_FORMATS)[number];
const E2B_KEY = /^e2b_[0-9a-f]{40}$/;
/** How many characters of a key its `key_prefix` shows: the scheme plus 8 random characters. */
const VISIBLE_RANDOM_CHARACTERS = 8;

export interface NewApiKeySecret {
  fullKey: string;
  keyHash: string;
  keyPrefix: string;
}

/** Makes a new random key with its stored hash and visible prefix. */
export function generateApiKeySecret(format: ApiKeyFormat = 'sandboxd'): NewApiKeySecret {
  const [scheme, random] = format === 'e2b' ? ['e2b_', randomBytes(20).toString('hex')] : [API_KEY_PREFIX, randomBytes(32).toString('base64url')];
  const fullKey = scheme + random;
  return { fullKey, keyHash: hashApiKey(fullKey), keyPrefix: fullKey.slice(0, scheme.length + VISIBLE_RANDOM_CHARACTERS) };
}

/** The stored form of a key. */
export function hashApiKey(fullKey: string): string {
  return createHash('sha256').update(fullKey).digest('hex');
}

/** True when a credential looks like one of our API keys (as opposed to a signed bearer token). */
export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX) || E2B_KEY.test(credential);
}
