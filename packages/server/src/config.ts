/**
 * The one typed configuration object of sandboxd. Every setting comes from an environment variable
 * `SANDBOXD_*`; this module is the only place that reads `process.env`. A bad value fails at start with
 * a message naming the variable.
 */
import os from 'node:os';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

/** Limits attached to a subscription plan; later features (rate limits, quotas) read them. */
export const PlanLimitsSchema = Type.Object({
  /** Execute / async-execute calls allowed per minute. */
  executionsPerMinute: Type.Integer({ minimum: 1 }),
  /** VMs a user may have running at once. */
  maxConcurrentVms: Type.Integer({ minimum: 1 }),
  /** Sum of vCPUs over a user's running VMs. */
  maxTotalVcpus: Type.Integer({ minimum: 1 }),
});
export type PlanLimits = Static<typeof PlanLimitsSchema>;

/** Built-in plans; `SANDBOXD_PLANS` (a JSON object of plan name to limits) replaces or adds plans. */
export const DEFAULT_PLANS: Record<string, PlanLimits> = {
  free: { executionsPerMinute: 60, maxConcurrentVms: 2, maxTotalVcpus: 4 },
  pro: { executionsPerMinute: 600, maxConcurrentVms: 10, maxTotalVcpus: 32 },
  enterprise: { executionsPerMinute: 6000, maxConcurrentVms: 100, maxTotalVcpus: 400 },
};

type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

interface Setting<T> {
  /** The environment variable that sets it. */
  env: string;
  /** Shown in errors and the README. */
  description: string;
  parse: (raw: string) => T;
  fallback: () => T;
}

/** Parses integers strictly: "8080" yes, "80a", "8.5" and "" no. */
function integer(min: number, max: number) {
  return (raw: string): number => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error(`expected an integer, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`expected an integer from ${min} to ${max}, got ${n}`);
    return n;
  };
}

function oneOf<T extends string>(...values: T[]) {
  return (raw: string): T => {
    if (!(values as string[]).includes(raw)) throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };
}

function text(raw: string): string {
  if (raw.trim() === '') throw new Error('must not be empty');
  return raw;
}

function booleanFlag(raw: string): boolean {
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new Error(`expected true or false, got "${raw}"`);
}

function databaseUrl(raw: string): string {
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new Error('only postgres:// URLs are supported (leave unset for the embedded SQLite store)');
  return raw;
}

function plans(raw: string): Record<string, PlanLimits> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('expected a JSON object of plan name to limits');
  }
  const schema = Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_-]*$' }), PlanLimitsSchema);
  if (!Value.Check(schema, parsed)) {
    const first = Value.Errors(schema, parsed)[0];
    throw new Error(`invalid plans: ${first ? `${first.instancePath || '/'} ${first.message}` : 'bad shape'}`);
  }
  return { ...DEFAULT_PLANS, ...parsed };
}

const settings = {
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
  },
  cacheDir: {
    env: 'SANDBOXD_CACHE_DIR',
    description: 'Cache shared by every clone on the machine (guest images, snapshots)',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => path.join(os.homedir(), '.cache', 'sandboxd'),
  },
  databaseUrl: {
    env: 'SANDBOXD_DATABASE_URL',
    description: 'PostgreSQL URL (postgres://…) for cluster mode; unset = embedded SQLite in the data directory',
    parse: databaseUrl,
    fallback: () => null as string | null,
  },
  logLevel: {
    env: 'SANDBOXD_LOG_LEVEL',
    description: 'pino log level',
    parse: oneOf<LogLevel>('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    fallback: (): LogLevel => 'info',
  },
  authSecret: {
    env: 'SANDBOXD_AUTH_SECRET',
    description: 'Secret that signs bearer tokens (at least 32 characters); unset = generated once and kept in the store',
    parse: (raw: string) => {
      if (raw.length < 32) throw new Error('must be at least 32 characters');
      return raw;
    },
    fallback: () => null as string | null,
  },
  accessTokenTtlSeconds: {
    env: 'SANDBOXD_ACCESS_TOKEN_TTL_SECONDS',
    description: 'Lifetime of bearer tokens from POST /v1/auth/token',
    parse: integer(60, 30 * 86400),
    fallback: () => 3600,
  },
  adminUsername: {
    env: 'SANDBOXD_ADMIN_USERNAME',
    description: 'Name of the admin user created on first start',
    parse: text,
    fallback: () => 'admin',
  },
  adminPassword: {
    env: 'SANDBOXD_ADMIN_PASSWORD',
    description: 'Password of the admin user created on first start; unset = random, printed once',
    parse: text,
    fallback: () => null as string | null,
  },
  defaultPlan: {
    env: 'SANDBOXD_DEFAULT_PLAN',
    description: 'Plan given to new users',
    parse: text,
    fallback: () => 'free',
  },
  plans: {
    env: 'SANDBOXD_PLANS',
    description: 'JSON object of plan name to {executionsPerMinute, maxConcurrentVms, maxTotalVcpus}, merged over the built-in free/pro/enterprise',
    parse: plans,
    fallback: () => DEFAULT_PLANS,
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
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof settings;
/** The validated configuration. */
export type Config = { [K in keyof Settings]: ReturnType<Settings[K]['fallback']> };

/** Thrown when an environment variable has a bad value; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Builds the configuration from environment variables (default: this process's), applying defaults.
 * `overrides` wins over the environment; tests use it instead of mutating `process.env`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const config: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const raw = env[setting.env];
    if (raw === undefined || raw === '') {
      config[key] = setting.fallback();
      continue;
    }
    try {
      config[key] = setting.parse(raw);
    } catch (error) {
      throw new ConfigError(`${setting.env}: ${(error as Error).message} (${setting.description})`);
    }
  }
  const result = { ...config, ...overrides } as Config;
  if (!result.publicUrl) result.publicUrl = `http://${result.host.includes(':') ? `[${result.host}]` : result.host}:${result.port}`;
  if (!(result.defaultPlan in result.plans)) {
    throw new ConfigError(`SANDBOXD_DEFAULT_PLAN: "${result.defaultPlan}" is not a plan (known: ${Object.keys(result.plans).join(', ')})`);
  }
  return result;
}

/** The documented settings, for the README and `sandboxd --help`. */
export function describeSettings(): { env: string; description: string }[] {
  return Object.values(settings).map(({ env, description }) => ({ env, description }));
}
