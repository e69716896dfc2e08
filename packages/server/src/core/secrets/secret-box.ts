/**
 * Secrets sealed at rest: values the server must read back (a webhook's signing secret, a browser credential's
 * password, a vault secret), so they cannot be stored as hashes like API keys. Each is stored encrypted with
 * AES-256-GCM under a key derived (HKDF-SHA256) from a secret the caller names, with the row it belongs to as the
 * associated data, so a ciphertext copied onto another row does not open.
 *
 * What this protects depends on where the key's secret lives. The server's box (webhook secrets, browser
 * credentials) derives from the auth secret (`SANDBOXD_AUTH_SECRET`, or the store's generated
 * `auth.token_secret`), which every node of a cluster shares. Unless SANDBOXD_AUTH_SECRET is set, it is in the same
 * database, so a dump or a backup of the database opens these secrets and can mint access tokens: set
 * SANDBOXD_AUTH_SECRET outside the database to make a dump alone reveal nothing. The vault uses the same box under
 * a key of its own (`VAULT_KEY_INFO`) that is never in the database (core/vault/vault-key.ts: SANDBOXD_VAULT_KEY or
 * DATA_DIR/vault.key).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
/**
 * The key derivation's info of the server's box. It names webhooks because they sealed with it first; browser
 * credentials share it. Changing it would leave every sealed value unreadable.
 */
const SERVER_KEY_INFO = 'sandboxd webhook signing secrets v1';
/** The key derivation's info for vault secrets: a key of their own, never the server's. */
export const VAULT_KEY_INFO = 'sandboxd vault secrets v1';
const IV_BYTES = 12;

export class SecretBox {
  private readonly key: Buffer;

  /** `purpose`: the HKDF info, so that each kind of secret has its own key (default: the server's box). */
  constructor(serverSecret: string, purpose: string = SERVER_KEY_INFO) {
    this.key = Buffer.from(hkdfSync('sha256', serverSecret, 'sandboxd', purpose, 32));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, each base64url. */
  seal(plaintext: string, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** The plaintext; throws when the value was sealed under another key or for another id. */
  open(sealed: string, associatedData: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed secret');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('the signing secret cannot be decrypted (was SANDBOXD_AUTH_SECRET changed?): rotate the endpoint secret');
    }
  }
}
