/**
 * Computer use: a desktop session's screen size (null: the desktop's default), and the recordings its VM made
 * that were saved to the object store (`object_key`) when they were stopped through the API.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: SqlDialect): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('screen_width', 'integer').execute();
  await db.schema.alterTable('sessions').addColumn('screen_height', 'integer').execute();

  await db.schema
    .createTable('desktop_recordings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('vm_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('duration_seconds', 'real')
    .addColumn('size_bytes', 'integer')
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('object_key', 'text')
    .addColumn('error', 'text')
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('stopped_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('saved_at', 'text')
    .execute();
  await db.schema.createIndex('desktop_recordings_user_session').on('desktop_recordings').columns(['user_id', 'session_id', 'created_at']).execute();
}
