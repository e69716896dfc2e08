/**
 * Terminal attach tokens in the store rather than in a node's memory, so a token minted by one node of a cluster
 * attaches through any other (single use: redeeming deletes the row). Only the SHA-256 of a token is kept.
 */
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('pty_attach_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('vm_id', 'text', (c) => c.notNull())
    .addColumn('pty_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pty_attach_tokens_expiry').on('pty_attach_tokens').column('expires_at').execute();
}
