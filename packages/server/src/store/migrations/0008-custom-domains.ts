/**
 * Custom domains: a user's domain mapped to a share (or a session's port), proven theirs by a DNS TXT record.
 * Several accounts may claim one domain while pending; the partial unique index lets only one claim of a
 * domain be `verified`, whichever node verifies it. A user has at most one open (not failed) claim of a
 * domain. The check lease columns let a cluster's checkers share the pending claims without doubles.
 * (Numbered 0008: 0007 is reserved for a branch in flight; the migrator runs migrations missing in between.)
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('custom_domains')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    // The core deletes a share's domains (with their events) before the share; the cascade is the safety net.
    .addColumn('share_id', 'text', (c) => c.references('shares.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('dns_provider', 'text', (c) => c.notNull())
    .addColumn('verification_token', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('failure_reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('verified_at', 'text')
    .addColumn('last_checked_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('next_check_at', 'text')
    .addColumn('check_lease_owner', 'text')
    .addColumn('check_lease_until', 'text')
    .execute();
  await db.schema.createIndex('custom_domains_user_id').on('custom_domains').column('user_id').execute();
  // Lookups by name (every request to a custom domain): the partial indexes below cannot serve a query whose
  // status is a bound parameter, so the name has a plain index of its own.
  await db.schema.createIndex('custom_domains_domain').on('custom_domains').column('domain').execute();
  await db.schema.createIndex('custom_domains_share_id').on('custom_domains').column('share_id').execute();
  await db.schema.createIndex('custom_domains_due').on('custom_domains').columns(['status', 'next_check_at']).execute();
  // Partial indexes (both SQLite and PostgreSQL have them); the conditions are literal DDL, not parameters.
  await db.schema
    .createIndex('custom_domains_one_verified')
    .on('custom_domains')
    .column('domain')
    .unique()
    .where(sql.raw<boolean>(`status = 'verified'`))
    .execute();
  await db.schema
    .createIndex('custom_domains_one_open_claim_per_user')
    .on('custom_domains')
    .columns(['domain', 'user_id'])
    .unique()
    .where(sql.raw<boolean>(`status <> 'failed'`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('custom_domains').execute();
}
