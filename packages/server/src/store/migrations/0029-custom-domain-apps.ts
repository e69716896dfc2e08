/**
 * Custom domains may serve a deployed app (issue 38): `app_id` names the app, and such a claim has no session
 * or port of its own (the app's live replicas are looked up on every request), so `session_id` and `port`
 * become nullable. A claim maps exactly one target: a share or a session's port (`session_id` set), or an app
 * (`app_id` set); the CHECK holds it. The core deletes an app's domains (with their events) before the app;
 * the cascade is the safety net. SQLite cannot drop NOT NULL in place, so its table is rebuilt (nothing
 * references `custom_domains`, so the rebuild is safe with foreign keys on).
 */
import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

const COLUMNS = [
  'id',
  'user_id',
  'domain',
  'share_id',
  'session_id',
  'port',
  'dns_provider',
  'verification_token',
  'status',
  'failure_reason',
  'created_at',
  'expires_at',
  'verified_at',
  'last_checked_at',
  'last_error',
  'next_check_at',
  'check_lease_owner',
  'check_lease_until',
  'record_seen_at',
  'missed_checks',
].join(', ');

/** The indexes of migration 0008, recreated after SQLite's rebuild (the partial conditions are literal DDL). */
async function createIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('custom_domains_user_id').on('custom_domains').column('user_id').execute();
  await db.schema.createIndex('custom_domains_domain').on('custom_domains').column('domain').execute();
  await db.schema.createIndex('custom_domains_share_id').on('custom_domains').column('share_id').execute();
  await db.schema.createIndex('custom_domains_due').on('custom_domains').columns(['status', 'next_check_at']).execute();
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

/** SQLite: the table of 0008 + 0021, with `session_id`/`port` nullable when `withApps`, and `app_id`. */
async function rebuildSqlite(db: Kysely<unknown>, withApps: boolean): Promise<void> {
  const notNullUnlessApp = withApps ? '' : ' NOT NULL';
  await sql
    .raw(
      `CREATE TABLE custom_domains_next (
        id text PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        domain text NOT NULL,
        share_id text REFERENCES shares(id) ON DELETE CASCADE,
        session_id text${notNullUnlessApp} REFERENCES sessions(id) ON DELETE CASCADE,
        port integer${notNullUnlessApp},
        dns_provider text NOT NULL,
        verification_token text NOT NULL,
        status text NOT NULL,
        failure_reason text,
        created_at text NOT NULL,
        expires_at text NOT NULL,
        verified_at text,
        last_checked_at text,
        last_error text,
        next_check_at text,
        check_lease_owner text,
        check_lease_until text,
        record_seen_at text,
        missed_checks integer NOT NULL DEFAULT 0` +
        (withApps
          ? `,
        app_id text REFERENCES apps(id) ON DELETE CASCADE,
        CONSTRAINT custom_domains_one_target CHECK ((app_id IS NULL) = (session_id IS NOT NULL) AND (session_id IS NULL) = (port IS NULL))`
          : '') +
        `)`,
    )
    .execute(db);
  await sql.raw(`INSERT INTO custom_domains_next (${COLUMNS}) SELECT ${COLUMNS} FROM custom_domains`).execute(db);
  await sql.raw('DROP TABLE custom_domains').execute(db);
  await sql.raw('ALTER TABLE custom_domains_next RENAME TO custom_domains').execute(db);
  await createIndexes(db);
}

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect === 'postgres') {
    await sql`ALTER TABLE custom_domains ALTER COLUMN session_id DROP NOT NULL`.execute(db);
    await sql`ALTER TABLE custom_domains ALTER COLUMN port DROP NOT NULL`.execute(db);
    await sql`ALTER TABLE custom_domains ADD COLUMN app_id text REFERENCES apps(id) ON DELETE CASCADE`.execute(db);
    await sql`ALTER TABLE custom_domains ADD CONSTRAINT custom_domains_one_target CHECK ((app_id IS NULL) = (session_id IS NOT NULL) AND (session_id IS NULL) = (port IS NULL))`.execute(
      db,
    );
  } else {
    await rebuildSqlite(db, true);
  }
  await db.schema.createIndex('custom_domains_app_id').on('custom_domains').column('app_id').execute();
}

export async function down(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await sql`DELETE FROM custom_domains WHERE app_id IS NOT NULL`.execute(db);
  if (dialect === 'postgres') {
    await db.schema.dropIndex('custom_domains_app_id').execute();
    await sql`ALTER TABLE custom_domains DROP CONSTRAINT custom_domains_one_target`.execute(db);
    await sql`ALTER TABLE custom_domains DROP COLUMN app_id`.execute(db);
    await sql`ALTER TABLE custom_domains ALTER COLUMN port SET NOT NULL`.execute(db);
    await sql`ALTER TABLE custom_domains ALTER COLUMN session_id SET NOT NULL`.execute(db);
  } else {
    await rebuildSqlite(db, false);
  }
}
