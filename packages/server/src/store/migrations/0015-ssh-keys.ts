/**
 * SSH public keys per user, for the SSH gateway (`ssh <vm_id>@host`). The gateway looks a key up by its SHA-256
 * fingerprint, so that is unique per user (the same key may belong to two users: a login names the VM, and the
 * VM's owner decides whose key counts).
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await withSerialId(db.schema.createTable('ssh_keys'), dialect)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_type', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('ssh_keys_user_fingerprint').unique().on('ssh_keys').columns(['user_id', 'fingerprint']).execute();
  await db.schema.createIndex('ssh_keys_fingerprint').on('ssh_keys').column('fingerprint').execute();
}
