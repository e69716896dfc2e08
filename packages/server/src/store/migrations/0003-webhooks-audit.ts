/**
 * Webhook endpoints, their deliveries and every delivery attempt, and the audit log. The deliveries
 * table is the dispatcher's work queue: a row is due when it is pending and `next_retry_at` has passed,
 * and a node sending it holds a lease (`lease_until`, `lease_owner`) so two nodes never send the same
 * attempt at once.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('event_patterns', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('previous_secret_ciphertext', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('verified_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema.createIndex('webhook_endpoints_user_id').on('webhook_endpoints').columns(['user_id', 'created_at']).execute();

  await withSerialId(db.schema.createTable('webhook_deliveries'), dialect)
    .addColumn('delivery_id', 'text', (c) => c.notNull().unique())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('event_group', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('scheduled_attempt', 'integer', (c) => c.notNull())
    .addColumn('next_retry_at', 'text')
    .addColumn('last_attempt_at', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('final_http_status', 'integer')
    .addColumn('error_message', 'text')
    .addColumn('replay_of_delivery_id', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_retry_at']).execute();
  await db.schema.createIndex('webhook_deliveries_user_id').on('webhook_deliveries').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_endpoint_id').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();

  await withSerialId(db.schema.createTable('webhook_delivery_attempts'), dialect)
    .addColumn('delivery_seq', 'integer', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('succeeded', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_delivery_attempts_delivery').on('webhook_delivery_attempts').columns(['delivery_seq', 'id']).execute();

  // No foreign key to users: the audit trail outlives the accounts it mentions.
  await withSerialId(db.schema.createTable('audit_events'), dialect)
    .addColumn('user_id', 'integer')
    .addColumn('username', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'integer')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('source_ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('detail', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_user_id').on('audit_events').columns(['user_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['audit_events', 'webhook_delivery_attempts', 'webhook_deliveries', 'webhook_endpoints']) await db.schema.dropTable(table).execute();
}
