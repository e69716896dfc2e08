/**
 * PKCE (RFC 7636, S256) for the command-line login: a random verifier, and its challenge
 * base64url(SHA-256(verifier)). Uses Web Crypto (browsers, Node.js 19+; Node.js 18 with
 * `--experimental-global-webcrypto`).
 */

export interface PkcePair {
  /** Kept by the client; sent only to the exchange. */
  codeVerifier: string;
  /** Sent to start. */
  codeChallenge: string;
  codeChallengeMethod: 'S256';
}

/** The part of Web Crypto used here (typed locally: the package builds without DOM or Node types). */
interface WebCrypto {
  subtle: { digest(algorithm: string, data: Uint8Array): Promise<ArrayBuffer> };
  getRandomValues<T extends Uint8Array>(array: T): T;
}

function webCrypto(): WebCrypto {
  const crypto = (globalThis as { crypto?: WebCrypto }).crypto;
  if (!crypto?.subtle) throw new Error('PKCE needs Web Crypto (globalThis.crypto.subtle): use Node.js 19+ or a browser');
  return crypto;
}

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The S256 challenge of a verifier. */
export async function codeChallengeOf(codeVerifier: string): Promise<string> {
  const digest = await webCrypto().subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier));
  return base64url(new Uint8Array(digest));
}

/** A fresh verifier (32 random bytes: 43 characters) and its challenge. */
export async function createPkcePair(): Promise<PkcePair> {
  const codeVerifier = base64url(webCrypto().getRandomValues(new Uint8Array(32)));
  return { codeVerifier, codeChallenge: await codeChallengeOf(codeVerifier), codeChallengeMethod: 'S256' };
}
