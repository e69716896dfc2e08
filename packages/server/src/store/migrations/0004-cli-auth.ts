/**
 * Command-line logins (a device-authorization flow bound with PKCE). One row per `POST /api/cli-auth/start`;
 * the device code is kept only as its SHA-256 hash, the user code in its normalized form (no dash).
 * Independent of the other migrations except for `users` (0001).
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await withSerialId(db.schema.createTable('cli_auth_requests'), dialect)
    .addColumn('device_code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_code', 'text', (c) => c.notNull().unique())
    .addColumn('code_challenge', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('requester_ip', 'text')
    .addColumn('requester_user_agent', 'text')
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('api_key_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('last_polled_at', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('consumed_at', 'text')
    .execute();
  await db.schema.createIndex('cli_auth_requests_expires_at').on('cli_auth_requests').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('cli_auth_requests').execute();
}
