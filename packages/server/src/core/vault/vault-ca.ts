/**
 * The deployment's vault CA: the certificate authority whose leaf certificates sandboxd presents to a VM for the
 * hosts a secret is bound to. One per deployment, shared by every node through the store (a VM restored from a
 * snapshot on another node trusts the same CA): the certificate in the clear, its key sealed under the vault
 * key. Made at the first use, by whichever node gets there first (`readOrInitSetting` settles a race).
 *
 * Guests trust it from the moment they start (`installGuestCa`): it is added to the system bundle (curl,
 * OpenSSL, Python, Debian's pip and requests) and written where NODE_EXTRA_CA_CERTS points Node.
 */
import { AppError } from '../errors.ts';
import type { GuestAgent } from '../vm-engine.ts';
import type { CaMaterial } from './vault-ports.ts';
import type { Database } from '../../store/database.ts';
import { readOrInitSetting, readSetting } from '../../store/settings-store.ts';
import type { VaultSealer } from './vault-key.ts';
import { GUEST_CA_PATH } from './vault-service.ts';

const SETTING = 'vault.ca';
const SEALING_CONTEXT = 'vault.ca';
const SYSTEM_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** The guest's stderr kept for the error message: the guest is not trusted to keep it short. */
const MAX_STDERR_BYTES = 4096;

export class VaultCa {
  private loading: Promise<CaMaterial> | null = null;

  constructor(
    private readonly database: Database,
    private readonly box: VaultSealer,
    private readonly create: (commonName: string) => Promise<CaMaterial>,
  ) {}

  /** The CA (made and stored at the first call in the deployment). */
  material(): Promise<CaMaterial> {
    this.loading ??= this.load().catch((error: unknown) => {
      this.loading = null;
      throw error;
    });
    return this.loading;
  }

  private async load(): Promise<CaMaterial> {
    let stored = await readSetting(this.database.db, SETTING);
    if (stored === undefined) {
      const made = await this.create('sandboxd vault CA');
      stored = await readOrInitSetting(
        this.database.db,
        SETTING,
        JSON.stringify({ cert_pem: made.certPem, sealed_key: this.box.seal(made.keyPem, SEALING_CONTEXT) }),
      );
    }
    const { cert_pem: certPem, sealed_key: sealedKey } = JSON.parse(stored) as { cert_pem: string; sealed_key: string };
    try {
      return { certPem, keyPem: this.box.open(sealedKey, SEALING_CONTEXT) };
    } catch (error) {
      if (error instanceof AppError) throw error; // no vault key on this node: its own message says why
      throw new Error('the vault CA key cannot be decrypted (was the vault key changed?)');
    }
  }
}

/**
 * Makes a guest trust the CA: its own file (NODE_EXTRA_CA_CERTS) and the system bundle, appended once (a VM from
 * a snapshot that has it already is left as it is). `update-ca-certificates` would rebuild the bundle, seconds
 * under TCG; appending is what it would do for one certificate. The PEM reaches the shell as an env variable.
 */
export async function installGuestCa(agent: GuestAgent, certPem: string): Promise<void> {
  const script = [
    'set -e',
    `mkdir -p "$(dirname '${GUEST_CA_PATH}')"`,
    `printf '%s\\n' "$SANDBOXD_VAULT_CA" > '${GUEST_CA_PATH}'`,
    `if [ -f '${SYSTEM_BUNDLE}' ] && ! grep -qF "$(sed -n 2p '${GUEST_CA_PATH}')" '${SYSTEM_BUNDLE}'; then cat '${GUEST_CA_PATH}' >> '${SYSTEM_BUNDLE}'; fi`,
  ].join('\n');
  const stderr: Buffer[] = [];
  let stderrBytes = 0;
  const result = await agent.exec(
    { argv: ['/bin/sh', '-c', script], env: { SANDBOXD_VAULT_CA: certPem.trim() }, timeoutMs: 30_000 },
    {
      onStdout: () => undefined,
      onStderr: (chunk) => {
        // Only the first MAX_STDERR_BYTES are kept; the rest is read and dropped.
        if (stderrBytes >= MAX_STDERR_BYTES) return;
        const kept = chunk.subarray(0, MAX_STDERR_BYTES - stderrBytes);
        stderr.push(kept);
        stderrBytes += kept.length;
      },
    },
  );
  if (result.exitCode !== 0)
    throw new Error(`the vault CA could not be installed in the guest (exit ${result.exitCode}): ${Buffer.concat(stderr).toString('utf8').trim()}`);
}
