/**
 * Opens the store: embedded SQLite (better-sqlite3, WAL) in the data directory by default, or
 * PostgreSQL when a `postgres://` URL is configured. Both run the same Kysely migrations at open.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations/index.ts';
import type { Tables } from './schema.ts';

export type SqlDialect = 'sqlite' | 'postgres';

export interface Database {
  readonly db: Kysely<Tables>;
  readonly dialect: SqlDialect;
  /** Throws when the store cannot answer a trivial query (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Directory of the SQLite file (`sandboxd.db`); used when `databaseUrl` is null. */
  dataDir: string;
  databaseUrl: string | null;
}

// PostgreSQL returns int8 (e.g. count(*)) as strings; every count we keep fits a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

/** Opens the configured store and brings its schema up to date. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const database = options.databaseUrl ? openPostgres(options.databaseUrl) : openSqlite(options.dataDir);
  try {
    await migrateToLatest(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

function openSqlite(dataDir: string): Database {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = new SQLite(path.join(dataDir, 'sandboxd.db'));
  file.pragma('journal_mode = WAL');
  file.pragma('foreign_keys = ON');
  // Several writers (API, schedulers) share the file: wait for the lock rather than fail at once.
  file.pragma('busy_timeout = 5000');
  file.pragma('synchronous = NORMAL');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: file }) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

function openPostgres(url: string): Database {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client's error (e.g. the server restarted) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

async function migrateToLatest(database: Database): Promise<void> {
  const migrator = new Migrator({
    db: database.db as unknown as Kysely<unknown>,
    provider: migrationProvider(database.dialect),
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
    // Branches number their migrations ahead of merging, so one may land after a later-numbered one was
    // applied (0007 after 0008): run it then instead of refusing to start. Migrations never depend on a
    // lower-numbered one that is not merged.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`);
  }
}
