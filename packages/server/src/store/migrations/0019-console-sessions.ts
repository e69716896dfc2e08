/**
 * The web console's sessions held by the server, so signing out (or deleting the API key a session was started
 * with) ends them at once, and the sign-in failures that throttle password and key guessing. A session's cookie
 * carries a random token of which only the SHA-256 is kept here, as for API keys. Failures are rows counted in
 * a sliding window per username and per source address, in the store so every node of a cluster counts the
 * same ones.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('console_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // No foreign key: API keys are soft-deleted; the key's row is read at every request instead.
    .addColumn('api_key_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('console_sessions_expires_at').on('console_sessions').column('expires_at').execute();
  await db.schema.createIndex('console_sessions_api_key').on('console_sessions').column('api_key_id').execute();

  await withSerialId(db.schema.createTable('sign_in_failures'), dialect)
    .addColumn('username', 'text')
    .addColumn('source', 'text')
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_failures_username').on('sign_in_failures').columns(['username', 'at']).execute();
  await db.schema.createIndex('sign_in_failures_source').on('sign_in_failures').columns(['source', 'at']).execute();
  await db.schema.createIndex('sign_in_failures_at').on('sign_in_failures').column('at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sign_in_failures').execute();
  await db.schema.dropTable('console_sessions').execute();
}
