/**
 * Webhook signing secrets: HMAC signing needs the secret itself, so it is sealed at rest in the server's
 * `SecretBox` (core/secrets/secret-box.ts) with the endpoint id as the associated data.
 */
import { randomBytes } from 'node:crypto';

const SECRET_BYTES = 32;

/** A new secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}
