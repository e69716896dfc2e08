/**
 * Each vault secret names its injection point: where in a request its placeholder is swapped for the value
 * (core/vault/injection.ts). Secrets stored before get the default, `Authorization: Bearer`.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('vault_secrets')
    .addColumn('inject', 'text', (c) => c.notNull().defaultTo('{"type":"bearer"}'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('vault_secrets').dropColumn('inject').execute();
}
