/**
 * What a client facade keeps with a session (issue 34): `client_data`, JSON the core stores and returns but never
 * reads. The E2B facade keeps there the template name the caller asked for and whether the sandbox's ports are
 * open to anyone who knows its id (E2B's default) or only with its traffic token. Null for sessions made through
 * the native API.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('client_data', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('client_data').execute();
}
