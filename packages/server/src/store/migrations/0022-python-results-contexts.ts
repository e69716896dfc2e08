/**
 * Rich Python results and contexts (issue 33): an execution keeps its rich results (`results`, JSON: a notebook's
 * display data, images base64), its exception as a structure (`exception`, JSON `{name, value, traceback}`) and the
 * Python context it ran in (`python_context`, null for the session's default one). `python_contexts` holds the extra
 * contexts a user made in a session: each is an interpreter of its own in the session's VM, started in `cwd`.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('results', 'text').execute();
  await db.schema.alterTable('executions').addColumn('exception', 'text').execute();
  await db.schema.alterTable('executions').addColumn('python_context', 'text').execute();
  await db.schema
    .createTable('python_contexts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('cwd', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('python_contexts_session_id').on('python_contexts').column('session_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('python_contexts').execute();
  await db.schema.alterTable('executions').dropColumn('python_context').execute();
  await db.schema.alterTable('executions').dropColumn('exception').execute();
  await db.schema.alterTable('executions').dropColumn('results').execute();
}
