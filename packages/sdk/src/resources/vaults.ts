/**
 * Vaults of the caller: secrets that VMs use without ever holding them. A session or VM started with
 * `vaultIds` sees each secret as an environment variable holding a placeholder, which the server swaps for
 * the value only at the secret's injection point (`inject`: `Authorization: Bearer` by default) in HTTPS
 * requests to the secret's `allowedHosts`. Values go to the server and are never returned (the server masks
 * them in what the hosts answer); every use is in the vault's request log.
 */
import type { Vault, VaultRequestLogList, VaultSecret, VaultSecretInjection } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { cursorPages, type PagedList } from '../pagination.ts';

/** A secret to store: `name` is the environment variable VMs see its placeholder in, e.g. `OPENAI_API_KEY`. */
export interface VaultSecretOptions {
  name: string;
  /** The secret itself: stored encrypted, never returned. */
  value: string;
  /** Hosts the value may be sent to over HTTPS: `api.example.com` or `*.example.com` (its subdomains). */
  allowedHosts: string[];
  /**
   * Where in a request the value may go, and nowhere else: `{ type: 'bearer' }` (the default, `Authorization:
   * Bearer`), `{ type: 'basic' }` (the user or password of Basic credentials), or `{ type: 'header', name:
   * 'X-Api-Key', prefix: '' }` (that header's whole value after the prefix; GitHub: name `Authorization`, prefix `token `).
   */
  inject?: VaultSecretInjection;
}

export interface VaultCreateOptions extends CallOptions {
  description?: string | null;
  secrets?: VaultSecretOptions[];
}

export interface VaultChanges {
  /** Unique among your vaults. */
  name?: string;
  description?: string | null;
}

export interface VaultRequestLogOptions extends CallOptions {
  /** `substituted`: the value went to a bound host; `flagged`: the placeholder went somewhere else. */
  outcome?: 'substituted' | 'flagged';
  vmId?: string;
  secretName?: string;
  /** ISO date-times, inclusive. */
  since?: string;
  until?: string;
  /** 1 to 500 (default 100). */
  limit?: number;
  cursor?: string;
}

export class Vaults {
  constructor(private readonly transport: Transport) {}

  /** Creates a vault, with secrets or without (add them with `setSecret`). The answer lists names and hosts, never values. */
  async create(name: string, options: VaultCreateOptions = {}): Promise<Vault> {
    return this.transport.call('/v1/vaults', 'post', {
      json: {
        name,
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(options.secrets
          ? {
              secrets: options.secrets.map((s) => ({ name: s.name, value: s.value, allowed_hosts: s.allowedHosts, ...(s.inject ? { inject: s.inject } : {}) })),
            }
          : {}),
      },
      signal: options.signal,
    });
  }

  async list(options: CallOptions = {}): Promise<Vault[]> {
    return this.transport.call('/v1/vaults', 'get', { signal: options.signal });
  }

  /** A vault, with its secrets' names and hosts. */
  async get(vaultId: string, options: CallOptions = {}): Promise<Vault> {
    return this.transport.call('/v1/vaults/{vault_id}', 'get', { params: { vault_id: vaultId }, signal: options.signal });
  }

  /** Renames a vault or changes its description. */
  async update(vaultId: string, changes: VaultChanges, options: CallOptions = {}): Promise<Vault> {
    return this.transport.call('/v1/vaults/{vault_id}', 'patch', {
      params: { vault_id: vaultId },
      json: {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
      },
      signal: options.signal,
    });
  }

  /** Deletes a vault and its secrets: placeholders running VMs hold stop being swapped at once. */
  async delete(vaultId: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/vaults/{vault_id}', 'delete', { params: { vault_id: vaultId }, signal: options.signal });
  }

  /**
   * Adds a secret, or replaces the value and hosts (and, when given, the injection point) of one: a new value
   * reaches running VMs at their next request; a new secret is seen by sessions that attach the vault from now on.
   * Without `inject`, an existing secret keeps its injection point and a new one gets `Authorization: Bearer`.
   */
  async setSecret(
    vaultId: string,
    name: string,
    secret: { value: string; allowedHosts: string[]; inject?: VaultSecretInjection },
    options: CallOptions = {},
  ): Promise<VaultSecret> {
    return this.transport.call('/v1/vaults/{vault_id}/secrets/{name}', 'put', {
      params: { vault_id: vaultId, name },
      json: { value: secret.value, allowed_hosts: secret.allowedHosts, ...(secret.inject ? { inject: secret.inject } : {}) },
      signal: options.signal,
    });
  }

  /** Deletes a secret: its placeholder stops being swapped at once. */
  async deleteSecret(vaultId: string, name: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/vaults/{vault_id}/secrets/{name}', 'delete', { params: { vault_id: vaultId, name }, signal: options.signal });
  }

  /**
   * Each use of the vault's secrets (`substituted` or `flagged`), newest first: await it for a page (pass
   * `next_cursor` as `cursor` for older ones), or `for await` over every entry of every page.
   */
  requestLogs(vaultId: string, options: VaultRequestLogOptions = {}): PagedList<VaultRequestLogList['items'][number], VaultRequestLogList> {
    return cursorPages(
      options.cursor,
      (cursor) =>
        this.transport.call('/v1/vaults/{vault_id}/request-logs', 'get', {
          params: { vault_id: vaultId },
          query: {
            outcome: options.outcome,
            vm_id: options.vmId,
            secret_name: options.secretName,
            since: options.since,
            until: options.until,
            limit: options.limit,
            cursor,
          },
          signal: options.signal,
        }),
      (page) => page.items,
    );
  }
}
