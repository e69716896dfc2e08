/**
 * Settings of the vault: the key its secrets are sealed with, the extra CAs bound hosts may present, its request
 * log.
 */
import fs from 'node:fs';
import { integer, type Setting, type SettingValues } from './kit.ts';

/** The settings of the vault block, by name (each name is unique across the blocks). */
export const vaultSettings = {
  vaultKey: {
    env: 'SANDBOXD_VAULT_KEY',
    description:
      "The key vault secrets and the vault CA key are encrypted with at rest (AES-256-GCM under a key derived from it; at least 32 characters). Default: a random key generated once into DATA_DIR/vault.key (mode 0600), never the database; back it up apart from database backups. Every node of a cluster needs the same: set it on each, or join nodes with a token from `sandboxd cluster token`, which carries it. A node without the deployment's key (checked by its fingerprint in the store) refuses vault use (503 VAULT_KEY_UNAVAILABLE). Changing it makes stored secrets unreadable (set them again); values sealed under the old default (derived from the auth secret) are re-sealed under the key in use at the first start",
    parse: (raw: string) => {
      if (raw.length < 32) throw new Error('must be at least 32 characters (e.g. openssl rand -base64 48)');
      return raw;
    },
    fallback: () => null as string | null,
  },
  vaultUpstreamCaFile: {
    env: 'SANDBOXD_VAULT_UPSTREAM_CA_FILE',
    description:
      "A PEM file of extra CA certificates that hosts a vault secret is bound to may present (a private API's CA); the public roots bundled with Node are always trusted",
    parse: (raw: string) => {
      // Read at start: a missing or wrong file is a configuration error that names the variable.
      if (!fs.readFileSync(raw, 'utf8').includes('-----BEGIN CERTIFICATE-----')) throw new Error(`${raw} has no PEM certificate`);
      return raw;
    },
    fallback: () => null as string | null,
  },
  vaultLogRetentionDays: {
    env: 'SANDBOXD_VAULT_LOG_RETENTION_DAYS',
    description: 'Days the request log of vaults (GET /v1/vaults/{vault_id}/request-logs) keeps entries',
    parse: integer(1, 3650),
    fallback: () => 30,
  },
} satisfies Record<string, Setting<unknown>>;

/** The vault block of the configuration. */
export type VaultConfig = SettingValues<typeof vaultSettings>;
