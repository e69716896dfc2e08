/** The API path of one vault, shared by the vault's panel and its request log. */
import type { Schemas } from '../../api.ts';

export function vaultPath(vault: Pick<Schemas['Vault'], 'id'>): string {
  return `/v1/vaults/${encodeURIComponent(vault.id)}`;
}
