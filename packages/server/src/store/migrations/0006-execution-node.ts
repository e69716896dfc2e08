/**
 * The node whose process runs an execution. A restarted node ends its own in-flight executions as failed
 * (their runner died with the previous process), without touching those other nodes of a cluster run.
 * Existing records take the node of their VM; one that never got a VM stays without a node.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('node_id', 'text').execute();
  await sql`update executions set node_id = (select vms.node_id from vms where vms.id = executions.vm_id) where vm_id is not null`.execute(db);
  await db.schema.createIndex('executions_node_status').on('executions').columns(['node_id', 'status']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('executions_node_status').execute();
  await db.schema.alterTable('executions').dropColumn('node_id').execute();
}
