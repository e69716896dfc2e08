/**
 * Browser automation: sessions (one VM each, on one node), usage records (one per render and per session; a
 * render's screenshot lives in the object store under `screenshot_key`), and the credentials `fill-credential`
 * types into pages (the secret sealed with the server's secret box, never returned).
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('browser_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('vm_id', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('viewport_width', 'integer', (c) => c.notNull())
    .addColumn('viewport_height', 'integer', (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('idle_timeout_seconds', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('pages_visited', 'integer', (c) => c.notNull())
    .addColumn('screenshots_taken', 'integer', (c) => c.notNull())
    .addColumn('usage_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_activity', 'text', (c) => c.notNull())
    .addColumn('lifetime_ends_at', 'text', (c) => c.notNull())
    .addColumn('closed_at', 'text')
    .addColumn('end_reason', 'text')
    .execute();
  await db.schema.createIndex('browser_sessions_user_status').on('browser_sessions').columns(['user_id', 'status']).execute();
  await db.schema.createIndex('browser_sessions_node_status').on('browser_sessions').columns(['node_id', 'status']).execute();

  await withSerialId(db.schema.createTable('browser_usage'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('url', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('pages', 'integer', (c) => c.notNull())
    .addColumn('screenshots', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('screenshot_key', 'text')
    .addColumn('screenshot_format', 'text')
    .addColumn('screenshot_bytes', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('browser_usage_user_created').on('browser_usage').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('browser_credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('allowed_hosts', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('browser_credentials_user_name').unique().on('browser_credentials').columns(['user_id', 'name']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('browser_credentials').execute();
  await db.schema.dropTable('browser_usage').execute();
  await db.schema.dropTable('browser_sessions').execute();
}
