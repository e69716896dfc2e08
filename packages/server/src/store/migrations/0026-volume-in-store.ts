/**
 * Volumes that follow their VMs across nodes (issue 37): `in_store` says the cluster's object store has the
 * volume's latest data (its last writer ended or paused and its image was uploaded), so a node other than
 * `node_id` (which holds the latest image on its disk) may fetch it and mount it. 0 until the first upload.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('volumes')
    .addColumn('in_store', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('volumes').dropColumn('in_store').execute();
}
