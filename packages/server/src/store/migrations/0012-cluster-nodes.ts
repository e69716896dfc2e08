/**
 * Cluster nodes: every sandboxd process registers its node here and heartbeats (`heartbeat_at`), with what it
 * can run (capacity) and what it runs (load), so placement is a query and any node can declare a silent one
 * dead. `drained` stops placement on a node; `deployment_drain` tracks a deployment drain (start → done).
 * A single-node deployment has one row.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('cluster_nodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('internal_url', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('drained', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deployment_drain', 'text')
    .addColumn('vcpus', 'integer', (c) => c.notNull())
    .addColumn('memory_mb', 'integer', (c) => c.notNull())
    .addColumn('vm_slots', 'integer', (c) => c.notNull())
    .addColumn('templates', 'text', (c) => c.notNull())
    .addColumn('running_vms', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('used_vcpus', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('used_memory_mb', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('heartbeat_at', 'text', (c) => c.notNull())
    .addColumn('dead_at', 'text')
    .execute();
}
