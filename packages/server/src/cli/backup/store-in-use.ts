/**
 * Is a sandboxd server running on this data directory? A restore must not pull the files from under it.
 *
 * SQLite: the server holds the store open for as long as it runs, and in WAL mode every open connection holds a
 * shared lock, so asking for an exclusive lock without waiting fails exactly while any process (a server, or an
 * admin command at that moment) has it open; it works the same for servers of older releases, which wrote no
 * pid or lock file. PostgreSQL: the store is elsewhere, so the node registry answers: this node's row is live
 * and its heartbeat recent.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { Config } from '../../config/index.ts';
import { STORE_FILE } from './layout.ts';

/** Why the store is in use (a sentence), or null when nothing holds it. */
export async function storeInUse(config: Config): Promise<string | null> {
  if (config.server.databaseUrl) return postgresNodeLive(config);
  const file = path.join(config.server.dataDir, STORE_FILE);
  if (!fs.existsSync(file)) return null;
  let db: SQLite.Database | undefined;
  try {
    db = new SQLite(file, { fileMustExist: true, timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED')
      return `${file} is open in another process: a sandboxd server is running on ${config.server.dataDir} (or an admin command is, at this moment)`;
    throw error;
  } finally {
    db?.close();
  }
}

async function postgresNodeLive(config: Config): Promise<string | null> {
  const client = new pg.Client({ connectionString: config.server.databaseUrl! });
  await client.connect();
  try {
    const { rows } = await client.query<{ state: string; heartbeat_at: string }>('select state, heartbeat_at from cluster_nodes where id = $1', [
      config.cluster.nodeId,
    ]);
    const row = rows[0];
    if (!row || row.state !== 'live') return null;
    const ageMs = Date.now() - Date.parse(row.heartbeat_at);
    if (ageMs > config.cluster.nodeDeadAfterSeconds * 1000) return null;
    return `node ${config.cluster.nodeId} is live in the cluster (its last heartbeat ${Math.round(ageMs / 1000)} s ago): stop its server first`;
  } catch (error) {
    // A database without the registry (never served): nothing runs there.
    if ((error as { code?: string }).code === '42P01') return null;
    throw error;
  } finally {
    await client.end();
  }
}
