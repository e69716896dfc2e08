/**
 * Private networks between a user's VMs (issue 38): a network owns a /24 of virtual addresses (`cidr`, out of
 * 10.250.0.0/16, one /24 per network of a user); a member VM holds one address of it while it has not ended (a
 * paused VM keeps its address). `session_networks` are the networks a session's VMs join at start, so its next VM
 * (after one ended) joins them too. Rows go with their network, VM or session.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('networks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('cidr', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('networks_user_name').unique().on('networks').columns(['user_id', 'name']).execute();
  await db.schema.createIndex('networks_user_cidr').unique().on('networks').columns(['user_id', 'cidr']).execute();

  await db.schema
    .createTable('network_members')
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id').onDelete('cascade'))
    .addColumn('vm_id', 'text', (c) => c.notNull().references('vms.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('joined_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('network_members_pk', ['network_id', 'vm_id'])
    .execute();
  await db.schema.createIndex('network_members_address').unique().on('network_members').columns(['network_id', 'address']).execute();
  await db.schema.createIndex('network_members_vm').on('network_members').column('vm_id').execute();

  await db.schema
    .createTable('session_networks')
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('session_networks_pk', ['session_id', 'network_id'])
    .execute();
  await db.schema.createIndex('session_networks_network').on('session_networks').column('network_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('session_networks').execute();
  await db.schema.dropTable('network_members').execute();
  await db.schema.dropTable('networks').execute();
}
