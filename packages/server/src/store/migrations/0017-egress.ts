/**
 * Egress policies and the egress audit log. A policy belongs to a VM or to a session (whose new VMs copy it);
 * no row means the deployment's default (SANDBOXD_EGRESS_DEFAULT). The log keeps every connection attempt of
 * a VM under a restricted policy, pruned after SANDBOXD_EGRESS_LOG_RETENTION_DAYS.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('egress_policies')
    .addColumn('subject_kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('policy', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('egress_policies_pk', ['subject_kind', 'subject_id'])
    .execute();
  await withSerialId(db.schema.createTable('egress_log'), dialect)
    .addColumn('vm_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('scheme', 'text')
    .addColumn('name', 'text')
    .addColumn('address', 'text')
    .addColumn('port', 'integer')
    .addColumn('bytes_sent', 'bigint')
    .addColumn('bytes_received', 'bigint')
    .addColumn('verdict', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .execute();
  await db.schema.createIndex('egress_log_vm').on('egress_log').columns(['vm_id', 'id']).execute();
  await db.schema.createIndex('egress_log_at').on('egress_log').columns(['at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('egress_log').execute();
  await db.schema.dropTable('egress_policies').execute();
}
