/**
 * Custom domains are re-verified (issue 31, L-6): a verified claim's TXT record is looked up again every
 * `SANDBOXD_CUSTOM_DOMAIN_REVERIFY_SECONDS`, and a claim whose record is missing at enough consecutive checks
 * fails (`record_missing`) and stops being served. `record_seen_at` is when the record was last found,
 * `missed_checks` how many checks in a row did not find it. Verified claims get a due time (`next_check_at`)
 * like pending ones, so the checker's lease shares them among a cluster's nodes; existing verified claims are
 * due at once, so every domain is looked at again after the upgrade.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('custom_domains').addColumn('record_seen_at', 'text').execute();
  await db.schema
    .alterTable('custom_domains')
    .addColumn('missed_checks', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`UPDATE custom_domains SET record_seen_at = verified_at, next_check_at = verified_at WHERE status = 'verified'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE custom_domains SET next_check_at = NULL WHERE status = 'verified'`.execute(db);
  await db.schema.alterTable('custom_domains').dropColumn('missed_checks').execute();
  await db.schema.alterTable('custom_domains').dropColumn('record_seen_at').execute();
}
