/**
 * Settings of the HTTP server: where it listens and what it calls itself, its data directory and store, its logs,
 * its request bodies, and the admin listener.
 */
import path from 'node:path';
import { booleanFlag, integer, listenAddress, oneOf, text, type Setting, type SettingValues } from './kit.ts';

type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** A `postgres://` URL; without one the store is the embedded SQLite. */
function postgresUrl(raw: string): string {
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new Error('only postgres:// URLs are supported (leave unset for the embedded SQLite store)');
  return raw;
}

/** The settings of the server block, by name (each name is unique across the blocks). */
export const serverSettings = {
  host: { env: 'SANDBOXD_HOST', description: 'Address the API listens on', parse: text, fallback: () => '127.0.0.1' },
  port: { env: 'SANDBOXD_PORT', description: 'TCP port the API listens on', parse: integer(0, 65535), fallback: () => 8080 },
  publicUrl: {
    env: 'SANDBOXD_PUBLIC_URL',
    description: 'Base URL clients use to reach this server (used in links it hands out); default http://HOST:PORT',
    parse: (raw: string) => new URL(raw).toString().replace(/\/$/, ''),
    fallback: () => '',
  },
  dataDir: {
    env: 'SANDBOXD_DATA_DIR',
    description: 'Directory for the SQLite store, the admin key file and per-VM state',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => path.resolve('.sandboxd'),
    defaultText: '`./.sandboxd` (in the working directory)',
  },
  databaseUrl: {
    env: 'SANDBOXD_DATABASE_URL',
    description: 'PostgreSQL URL (postgres://…) for cluster mode; unset = embedded SQLite in the data directory',
    parse: postgresUrl,
    fallback: () => null as string | null,
  },
  logLevel: {
    env: 'SANDBOXD_LOG_LEVEL',
    description: 'pino log level',
    parse: oneOf<LogLevel>('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    fallback: (): LogLevel => 'info',
  },
  trustProxy: {
    env: 'SANDBOXD_TRUST_PROXY',
    description: 'Trust X-Forwarded-* headers (set when behind a reverse proxy)',
    parse: booleanFlag,
    fallback: () => false,
  },
  bodyLimitBytes: {
    env: 'SANDBOXD_BODY_LIMIT_BYTES',
    description: 'Largest JSON or form request body accepted',
    parse: integer(1024, 1024 * 1024 * 1024),
    fallback: () => 10 * 1024 * 1024,
  },
  unauthenticatedBodyLimitBytes: {
    env: 'SANDBOXD_UNAUTHENTICATED_BODY_LIMIT_BYTES',
    description:
      'Largest request body read before its api_key field authenticates it, on the operations that take the key in the body (session create, execute, upload, download, kill, VM create, browser session create, render, browser auth test) and are sent no X-API-Key or Authorization header; 413 beyond. Other operations refuse a request without a header credential before reading its body',
    parse: integer(1024, 1024 * 1024 * 1024),
    fallback: () => 2 * 1024 * 1024,
  },
  adminListen: {
    env: 'SANDBOXD_ADMIN_LISTEN',
    description:
      'HOST:PORT of the admin listener (worker control: GET /workers, drain, undrain, deployment drain; the Prometheus metrics: GET /metrics; needs the admin token), or `off`; default 127.0.0.1 on the public port + 1',
    parse: listenAddress,
    fallback: () => '',
  },
  adminToken: {
    env: 'SANDBOXD_ADMIN_TOKEN',
    description:
      'Bearer token of the admin listener (at least 32 characters); unset = generated at the first start and kept in DATA_DIR/admin-token (mode 0600)',
    parse: (raw: string) => {
      if (raw.length < 32) throw new Error('must be at least 32 characters');
      return raw;
    },
    fallback: () => null as string | null,
  },
} satisfies Record<string, Setting<unknown>>;

/** The server block of the configuration. */
export type ServerConfig = SettingValues<typeof serverSettings>;
