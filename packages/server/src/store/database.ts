/**
 * Opens the store: embedded SQLite (better-sqlite3, WAL) in the data directory by default, or
 * PostgreSQL when a `postgres://` URL is configured. Both run the same Kysely migrations at open.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type LogEvent } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations/index.ts';
import type { SqlDialect } from './dialect.ts';
import type { Tables } from './schema.ts';

/** What the store functions run on: the database or a transaction of it. */
export type Executor = Kysely<Tables>;

/** True when an error from an insert is a unique-constraint violation, on either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint failed/.test(e?.message ?? '');
}

export interface Database {
  readonly db: Executor;
  readonly dialect: SqlDialect;
  /** Throws when the store cannot answer a trivial query (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Directory of the SQLite file (`sandboxd.db`); used when `databaseUrl` is null. */
  dataDir: string;
  databaseUrl: string | null;
  /**
   * Told of every statement the store runs, transaction control (begin, commit) included, after it ran: what a
   * test counts as the store round trips of a request (test/vms/warm-execute-round-trips.test.ts).
   */
  onQuery?: (query: StoreQuery) => void;
}

/** One statement the store ran (see `DatabaseOptions.onQuery`). */
export interface StoreQuery {
  sql: string;
  /** The statement's first word, lower case (`select`, `insert`, `begin`…): what spans and metrics name it by. */
  verb: string;
  durationMs: number;
}

// PostgreSQL returns int8 (e.g. count(*)) as strings; every count we keep fits a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

/** Opens the configured store and brings its schema up to date. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const log = options.onQuery ? queryLog(options.onQuery) : undefined;
  const database = options.databaseUrl ? openPostgres(options.databaseUrl, log) : openSqlite(options.dataDir, log);
  try {
    await migrateToLatest(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/** Kysely's log option (it sees each statement a connection runs, a transaction's begin and commit too). */
function queryLog(onQuery: (query: StoreQuery) => void): (event: LogEvent) => void {
  return (event) =>
    onQuery({ sql: event.query.sql, verb: /^\s*(\w+)/.exec(event.query.sql)?.[1]?.toLowerCase() ?? 'query', durationMs: event.queryDurationMillis });
}

function openSqlite(dataDir: string, log?: (event: LogEvent) => void): Database {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = new SQLite(path.join(dataDir, 'sandboxd.db'));
  file.pragma('journal_mode = WAL');
  file.pragma('foreign_keys = ON');
  // Several writers (API, schedulers) share the file: wait for the lock rather than fail at once.
  file.pragma('busy_timeout = 5000');
  file.pragma('synchronous = NORMAL');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: file }), ...(log ? { log } : {}) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

function openPostgres(url: string, log?: (event: LogEvent) => void): Database {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client's error (e.g. the server restarted) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }), ...(log ? { log } : {}) });
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
