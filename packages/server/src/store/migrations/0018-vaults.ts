/**
 * The vault: per-user secrets that never enter a VM. A vault groups secrets; each secret's value is stored
 * sealed (AES-256-GCM under SANDBOXD_VAULT_KEY, see core/vault/vault-service.ts) with the hosts it may be sent
 * to. A session the vault is attached to holds one placeholder per secret (its VMs see it as an environment
 * variable); the egress proxy swaps a placeholder for the value in requests to the secret's hosts, and each
 * use, or a placeholder seen going elsewhere, is a row of the request log.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('vaults')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('vaults_user_name').unique().on('vaults').columns(['user_id', 'name']).execute();
  await db.schema
    .createTable('vault_secrets')
    .addColumn('vault_id', 'text', (c) => c.notNull().references('vaults.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('sealed_value', 'text', (c) => c.notNull())
    .addColumn('allowed_hosts', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('vault_secrets_pk', ['vault_id', 'name'])
    .execute();
  await db.schema
    .createTable('session_vault_placeholders')
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('vault_id', 'text', (c) => c.notNull())
    .addColumn('secret_name', 'text', (c) => c.notNull())
    .addColumn('placeholder', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_vault_placeholders_pk', ['session_id', 'vault_id', 'secret_name'])
    .execute();
  await withSerialId(db.schema.createTable('vault_request_logs'), dialect)
    .addColumn('vault_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('secret_name', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('vm_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('scheme', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('method', 'text')
    .addColumn('path', 'text')
    .addColumn('status', 'integer')
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('vault_request_logs_vault').on('vault_request_logs').columns(['vault_id', 'id']).execute();
  await db.schema.createIndex('vault_request_logs_at').on('vault_request_logs').columns(['at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('vault_request_logs').execute();
  await db.schema.dropTable('session_vault_placeholders').execute();
  await db.schema.dropTable('vault_secrets').execute();
  await db.schema.dropTable('vaults').execute();
}
