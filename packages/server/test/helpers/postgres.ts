// test-lane: heavy (a private PostgreSQL server): scripts/run-tests.mjs runs what imports this one at a time.
/**
 * A private, throwaway PostgreSQL server for tests: its own data directory and port under a temp dir,
 * started with Debian's binaries (installed by the set-up script) and removed afterwards.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.ts';

export interface PostgresServer {
  url: string;
  stop(): Promise<void>;
}

function findBinDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base) ? fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error("PostgreSQL is not installed (the test set-up installs Debian's postgresql package: run npm test)");
  return path.join(base, newest, 'bin');
}

/** PostgreSQL refuses to run as root, so as root the server runs as the `postgres` system user. */
function asServerUser(binary: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = findBinDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-pg-'));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'sock');
  fs.mkdirSync(socketDir);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    fs.chownSync(dir, uid, gid);
    fs.chownSync(socketDir, uid, gid);
  }
  const port = await freePort();
  const run = (binary: string, args: string[]) => {
    const [command, argv] = asServerUser(path.join(bin, binary), args);
    const result = spawnSync(command, argv, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${binary} failed: ${result.stderr || result.stdout}`);
  };
  run('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'sandboxd', '--no-sync', '-E', 'UTF8']);
  run('pg_ctl', [
    '-D',
    dataDir,
    '-w',
    '-t',
    '60',
    '-l',
    path.join(dir, 'server.log'),
    '-o',
    `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    'start',
  ]);
  const createdb = spawnSync(path.join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'sandboxd', 'sandboxd_test']);
  if (createdb.status !== 0) {
    run('pg_ctl', ['-D', dataDir, '-m', 'immediate', 'stop']);
    throw new Error(`createdb failed: ${createdb.stderr}`);
  }
  return {
    url: `postgres://sandboxd@127.0.0.1:${port}/sandboxd_test`,
    async stop() {
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
