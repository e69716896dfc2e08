/**
 * VMs as first-class objects: snapshots users take of their VMs (memory, device state and a disk layer over
 * the layer the VM built on), templates built from OCI images with their build logs, and on VMs a name,
 * metadata, the snapshot their disk builds on now, and a pause. A session remembers what its VMs start from.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema.alterTable('vms').addColumn('name', 'text').execute();
  await db.schema
    .alterTable('vms')
    .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema.alterTable('vms').addColumn('base_snapshot_id', 'text').execute();
  await db.schema.alterTable('vms').addColumn('paused_at', 'text').execute();
  await db.schema.alterTable('vms').addColumn('remaining_seconds', 'integer').execute();
  await db.schema.alterTable('vms').addColumn('python_context', 'text').execute();
  await db.schema.createIndex('vms_base_snapshot').on('vms').column('base_snapshot_id').execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('source_kind', 'text', (c) => c.notNull().defaultTo('template'))
    .execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('source_id', 'text', (c) => c.notNull().defaultTo('default'))
    .execute();

  await db.schema
    .createTable('snapshots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('source_vm_id', 'text')
    .addColumn('parent_id', 'text')
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('vcpu_count', 'integer', (c) => c.notNull())
    .addColumn('memory_mb', 'integer', (c) => c.notNull())
    .addColumn('disk_size_mb', 'integer', (c) => c.notNull())
    .addColumn('memory_bytes', 'bigint', (c) => c.notNull())
    .addColumn('disk_bytes', 'bigint', (c) => c.notNull())
    .addColumn('state_bytes', 'bigint', (c) => c.notNull())
    .addColumn('pause_ms', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('python_context', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('snapshots_user_name').unique().on('snapshots').columns(['user_id', 'name']).execute();
  await db.schema.createIndex('snapshots_parent').on('snapshots').column('parent_id').execute();

  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('oci_image', 'text', (c) => c.notNull())
    .addColumn('image_digest', 'text')
    .addColumn('build_args', 'text', (c) => c.notNull())
    .addColumn('vcpu_count', 'integer', (c) => c.notNull())
    .addColumn('memory_mb', 'integer', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('image', 'text')
    .addColumn('step', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('ready_at', 'text')
    .execute();
  await db.schema.createIndex('templates_user_name').unique().on('templates').columns(['user_id', 'name']).execute();

  await withSerialId(db.schema.createTable('template_build_logs'), dialect)
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id').onDelete('cascade'))
    .addColumn('line', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('template_build_logs_template').on('template_build_logs').columns(['template_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['template_build_logs', 'templates', 'snapshots']) await db.schema.dropTable(table).execute();
  await db.schema.dropIndex('vms_base_snapshot').execute();
  for (const column of ['name', 'metadata', 'base_snapshot_id', 'paused_at', 'remaining_seconds', 'python_context'])
    await db.schema.alterTable('vms').dropColumn(column).execute();
  for (const column of ['source_kind', 'source_id']) await db.schema.alterTable('sessions').dropColumn(column).execute();
}
