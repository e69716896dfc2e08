/**
 * App deployments (issue 38): an app is a user's named service at its own URL; each deployment is a version of it
 * (its manifest, the VMs that serve it, the snapshot of its installed VM that restarts and rollbacks start from).
 * `live_vm_ids` and `live_port` are what the preview proxy reads on every request to the app's host: a switch to
 * a new version is one update of that row.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('host_label', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('live_version', 'integer')
    .addColumn('latest_version', 'integer', (c) => c.notNull())
    .addColumn('replicas', 'integer', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('live_port', 'integer')
    .addColumn('live_vm_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('apps_user_name', ['user_id', 'name'])
    .execute();
  await db.schema
    .createTable('app_deployments')
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('manifest', 'text', (c) => c.notNull())
    .addColumn('session_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('vm_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('snapshot_id', 'text')
    .addColumn('error', 'text')
    .addColumn('log', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('live_at', 'text')
    .addColumn('ended_at', 'text')
    .addPrimaryKeyConstraint('app_deployments_pk', ['app_id', 'version'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('app_deployments').execute();
  await db.schema.dropTable('apps').execute();
}
