/**
 * Sessions and the VMs bound to them, execution (task) records, and the event outbox that webhook
 * delivery reads. Events are inserted in the same transaction as the change they describe.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('vm_lifetime_seconds', 'integer', (c) => c.notNull())
    .addColumn('memory_mb', 'integer', (c) => c.notNull())
    .addColumn('vcpu_count', 'integer', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('env', 'text', (c) => c.notNull())
    .addColumn('prewarm', 'integer', (c) => c.notNull())
    .addColumn('current_vm_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_activity_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('vms')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.references('sessions.id').onDelete('set null'))
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('end_reason', 'text')
    .addColumn('vcpu_count', 'integer', (c) => c.notNull())
    .addColumn('memory_mb', 'integer', (c) => c.notNull())
    .addColumn('lifetime_seconds', 'integer', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('ended_at', 'text')
    .execute();
  await db.schema.createIndex('vms_user_status').on('vms').columns(['user_id', 'status']).execute();
  await db.schema.createIndex('vms_session_id').on('vms').column('session_id').execute();
  await db.schema.createIndex('vms_status_expires').on('vms').columns(['status', 'expires_at']).execute();

  await withSerialId(db.schema.createTable('executions'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('vm_id', 'text')
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('exit_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('stdout', 'text', (c) => c.notNull())
    .addColumn('stderr', 'text', (c) => c.notNull())
    .addColumn('stdout_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stderr_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('execution_time', 'real')
    .addColumn('cpu_time', 'real')
    .execute();
  await db.schema.createIndex('executions_user_id').on('executions').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('executions_status').on('executions').column('status').execute();
  await db.schema.createIndex('executions_user_created').on('executions').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('executions_session_id').on('executions').column('session_id').execute();

  await withSerialId(db.schema.createTable('events'), dialect)
    .addColumn('event_id', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'integer')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('event_group', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('dispatched_at', 'text')
    .execute();
  await db.schema.createIndex('events_user_id').on('events').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('events_undispatched').on('events').columns(['dispatched_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['events', 'executions', 'vms', 'sessions']) await db.schema.dropTable(table).execute();
}
