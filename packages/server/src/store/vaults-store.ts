/**
 * Persistence of vaults, their sealed secrets, the placeholders sessions hold for them and the request log.
 * Everything a user reads is scoped by `user_id`; the egress path reads a session's placeholders by session.
 */
import type { Selectable } from 'kysely';
import type { SessionVaultPlaceholdersTable, VaultRequestLogsTable, VaultSecretsTable, VaultsTable } from './schema.ts';
import type { Executor } from './database.ts';
import type { VaultRequestRecord } from '../activity.ts';

export type VaultRow = Selectable<VaultsTable>;
export type VaultSecretRow = Selectable<VaultSecretsTable>;
export type PlaceholderRow = Selectable<SessionVaultPlaceholdersTable>;
export type VaultRequestLogEntry = Omit<VaultRequestLogsTable, 'id'>;

export async function insertVault(db: Executor, row: VaultRow): Promise<void> {
  await db.insertInto('vaults').values(row).execute();
}

export async function findVault(db: Executor, userId: number, id: string): Promise<VaultRow | undefined> {
  return db.selectFrom('vaults').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

export async function findVaultByName(db: Executor, userId: number, name: string): Promise<VaultRow | undefined> {
  return db.selectFrom('vaults').selectAll().where('user_id', '=', userId).where('name', '=', name).executeTakeFirst();
}

/** The user's vaults, oldest first. */
export async function listVaults(db: Executor, userId: number): Promise<VaultRow[]> {
  return db.selectFrom('vaults').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
}

export async function countVaults(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('vaults')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateVault(db: Executor, id: string, fields: Partial<Pick<VaultRow, 'name' | 'description' | 'updated_at'>>): Promise<void> {
  await db.updateTable('vaults').set(fields).where('id', '=', id).execute();
}

/** Deletes a vault with its secrets (placeholders stay: they no longer resolve to anything). */
export async function deleteVault(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('vault_secrets').where('vault_id', '=', id).execute();
  await db.deleteFrom('vaults').where('id', '=', id).execute();
}

/** Secrets of these vaults, by vault then name. */
export async function listVaultSecrets(db: Executor, vaultIds: string[]): Promise<VaultSecretRow[]> {
  if (vaultIds.length === 0) return [];
  return db.selectFrom('vault_secrets').selectAll().where('vault_id', 'in', vaultIds).orderBy('vault_id').orderBy('name').execute();
}

export async function upsertVaultSecret(db: Executor, row: VaultSecretRow): Promise<void> {
  await db
    .insertInto('vault_secrets')
    .values(row)
    .onConflict((c) =>
      c
        .columns(['vault_id', 'name'])
        .doUpdateSet({ sealed_value: row.sealed_value, allowed_hosts: row.allowed_hosts, inject: row.inject, updated_at: row.updated_at }),
    )
    .execute();
}

/** Resolves with whether there was such a secret. */
export async function deleteVaultSecret(db: Executor, vaultId: string, name: string): Promise<boolean> {
  const result = await db.deleteFrom('vault_secrets').where('vault_id', '=', vaultId).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows ?? 0) > 0;
}

export async function insertPlaceholders(db: Executor, rows: PlaceholderRow[]): Promise<void> {
  if (rows.length) await db.insertInto('session_vault_placeholders').values(rows).execute();
}

/** A session's placeholders. */
export async function listSessionPlaceholders(db: Executor, sessionId: string): Promise<PlaceholderRow[]> {
  return db.selectFrom('session_vault_placeholders').selectAll().where('session_id', '=', sessionId).execute();
}

/** The secret a session's placeholder stands for, with its vault's owner check done by the caller. */
export async function findSecretOfPlaceholder(db: Executor, sessionId: string, vaultId: string, name: string): Promise<VaultSecretRow | undefined> {
  return db
    .selectFrom('vault_secrets')
    .innerJoin('session_vault_placeholders as p', (join) =>
      join.onRef('p.vault_id', '=', 'vault_secrets.vault_id').onRef('p.secret_name', '=', 'vault_secrets.name'),
    )
    .selectAll('vault_secrets')
    .where('p.session_id', '=', sessionId)
    .where('vault_secrets.vault_id', '=', vaultId)
    .where('vault_secrets.name', '=', name)
    .executeTakeFirst();
}

export async function insertVaultRequestLogs(db: Executor, entries: VaultRequestLogEntry[]): Promise<void> {
  if (entries.length) await db.insertInto('vault_request_logs').values(entries).execute();
}

export interface VaultRequestLogFilter {
  vaultId: string;
  outcome?: 'substituted' | 'flagged';
  vmId?: string;
  secretName?: string;
  since?: string;
  until?: string;
  beforeId?: number;
  limit: number;
}

/** Newest first. */
export async function listVaultRequestLogs(db: Executor, filter: VaultRequestLogFilter): Promise<VaultRequestRecord[]> {
  let query = db.selectFrom('vault_request_logs').selectAll().where('vault_id', '=', filter.vaultId);
  if (filter.outcome) query = query.where('outcome', '=', filter.outcome);
  if (filter.vmId) query = query.where('vm_id', '=', filter.vmId);
  if (filter.secretName) query = query.where('secret_name', '=', filter.secretName);
  if (filter.since) query = query.where('at', '>=', filter.since);
  if (filter.until) query = query.where('at', '<=', filter.until);
  if (filter.beforeId !== undefined) query = query.where('id', '<', filter.beforeId);
  const rows = await query.orderBy('id', 'desc').limit(filter.limit).execute();
  return rows.map((row) => ({
    id: row.id,
    vaultId: row.vault_id,
    userId: row.user_id,
    secretName: row.secret_name,
    sessionId: row.session_id,
    vmId: row.vm_id,
    at: row.at,
    outcome: row.outcome,
    scheme: row.scheme === 'http' ? 'http' : 'https',
    host: row.host,
    method: row.method,
    path: row.path,
    status: row.status,
    detail: row.detail,
  }));
}

export async function pruneVaultRequestLogs(db: Executor, before: string): Promise<number> {
  const result = await db.deleteFrom('vault_request_logs').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows ?? 0);
}
