/**
 * Persistent volumes: a user's filesystem images on one node, outliving VMs, and which VMs mounted them. An
 * attachment row stays after its VM ends (the history of who mounted what); a volume is in use while a VM of
 * one of its rows has not ended, so nothing needs removing when a VM ends or its node dies.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('volumes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('size_mb', 'integer', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('volumes_user_name').unique().on('volumes').columns(['user_id', 'name']).execute();

  await db.schema
    .createTable('volume_attachments')
    .addColumn('volume_id', 'text', (c) => c.notNull().references('volumes.id').onDelete('cascade'))
    .addColumn('vm_id', 'text', (c) => c.notNull().references('vms.id').onDelete('cascade'))
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('mount_path', 'text', (c) => c.notNull())
    .addColumn('read_only', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('volume_attachments_pk', ['vm_id', 'volume_id'])
    .execute();
  await db.schema.createIndex('volume_attachments_volume').on('volume_attachments').column('volume_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('volume_attachments').execute();
  await db.schema.dropTable('volumes').execute();
}
