/**
 * The volumes a session mounts in each of its VMs (issue 37): what `POST /v1/vms` (or `POST /v1/sessions`) asked
 * for, so the session's next VM — after one was killed, expired or crashed — mounts the same volumes at the same
 * paths and modes. A row goes with its session or its volume (deleting a volume forgets it everywhere).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('session_volumes')
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('volume_id', 'text', (c) => c.notNull().references('volumes.id').onDelete('cascade'))
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('mount_path', 'text', (c) => c.notNull())
    .addColumn('read_only', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_volumes_pk', ['session_id', 'volume_id'])
    .execute();
  await db.schema.createIndex('session_volumes_volume').on('session_volumes').column('volume_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('session_volumes').execute();
}
