/**
 * Lifecycle hooks: a session's and a VM's hooks (JSON `{"pre_stop": {"command", "timeout_seconds"}}`, null for
 * none; a VM keeps the hooks it started with, so changing them later never reaches a running VM), and who
 * started an execution (`request`, or the VM's `pre_stop` hook), so a record of a hook says so. Existing
 * records have no hooks and were all started by requests.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('lifecycle_hooks', 'text').execute();
  await db.schema.alterTable('vms').addColumn('lifecycle_hooks', 'text').execute();
  await db.schema
    .alterTable('executions')
    .addColumn('triggered_by', 'text', (c) => c.notNull().defaultTo('request'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('triggered_by').execute();
  await db.schema.alterTable('vms').dropColumn('lifecycle_hooks').execute();
  await db.schema.alterTable('sessions').dropColumn('lifecycle_hooks').execute();
}
