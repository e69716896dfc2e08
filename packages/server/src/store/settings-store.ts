import type { Executor } from './database.ts';
/** Node-wide settings shared through the store (so every node of a cluster sees the same value). */

export async function readSetting(db: Executor, name: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
  return row?.value;
}

/**
 * Stores `value` under `name` unless a value is already there, and returns whichever value won.
 * Two nodes starting at once therefore agree on one value.
 */
export async function readOrInitSetting(db: Executor, name: string, value: string): Promise<string> {
  await db
    .insertInto('settings')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const stored = await readSetting(db, name);
  if (stored === undefined) throw new Error(`setting ${name} vanished right after it was written`);
  return stored;
}

/** Stores `value` under `name`, replacing what was there. */
export async function writeSetting(db: Executor, name: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ name, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute();
}

/** Every setting whose name starts with `prefix`, by name. */
export async function listSettings(db: Executor, prefix: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('settings')
    .select(['name', 'value'])
    .where('name', 'like', `${prefix.replace(/[\\%_]/g, '\\$&')}%`)
    .execute();
  return new Map(rows.filter((row) => row.name.startsWith(prefix)).map((row) => [row.name, row.value]));
}
