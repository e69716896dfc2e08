/**
 * Auto-pause and pause on expiry (issue 37): a session's and a VM's `auto_pause_seconds` (null: never paused for
 * idleness) and `on_expiry` (`kill`, the default, or `pause`: a VM whose lifetime ends is paused instead); a VM's
 * `last_activity_at`, the last use any node saw of it (written in batches, at most every few seconds), which the
 * node that runs it compares with its own in-memory record before pausing it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('auto_pause_seconds', 'integer').execute();
  await db.schema
    .alterTable('sessions')
    .addColumn('on_expiry', 'text', (c) => c.notNull().defaultTo('kill'))
    .execute();
  await db.schema.alterTable('vms').addColumn('auto_pause_seconds', 'integer').execute();
  await db.schema
    .alterTable('vms')
    .addColumn('on_expiry', 'text', (c) => c.notNull().defaultTo('kill'))
    .execute();
  await db.schema.alterTable('vms').addColumn('last_activity_at', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('vms').dropColumn('last_activity_at').execute();
  await db.schema.alterTable('vms').dropColumn('on_expiry').execute();
  await db.schema.alterTable('vms').dropColumn('auto_pause_seconds').execute();
  await db.schema.alterTable('sessions').dropColumn('on_expiry').execute();
  await db.schema.alterTable('sessions').dropColumn('auto_pause_seconds').execute();
}
