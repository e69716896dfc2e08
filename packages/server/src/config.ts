/**
 * The one typed configuration object of sandboxd. Every setting comes from an environment variable
 * `SANDBOXD_*`; this module is the only place that reads `process.env`. A bad value fails at start with
 * a message naming the variable.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { assertObjectKey } from './storage/object-validation.ts';
import { normalizeEgressPolicy, OPEN_EGRESS_POLICY, type EgressPolicy } from './core/egress-policy.ts';
import { parseUpstream } from './net/egress/policy-resolver.ts';

/** Limits attached to a subscription plan; later features (rate limits, quotas) read them. */
export const PlanLimitsSchema = Type.Object({
  /** Execute / async-execute calls allowed per minute. */
  executionsPerMinute: Type.Integer({ minimum: 1 }),
  /** VMs a user may have running at once. */
  maxConcurrentVms: Type.Integer({ minimum: 1 }),
  /** Sum of vCPUs over a user's running VMs. */
  maxTotalVcpus: Type.Integer({ minimum: 1 }),
  /**
   * Size of each VM's root disk, MiB: its filesystem grows to this after the VM is handed out, writing past it
   * fails with ENOSPC in the guest, and the VM's file on the host stays within it plus ~1 % of qcow2 metadata.
   * At least the guest image's own filesystem (1 GiB).
   */
  diskMb: Type.Integer({ minimum: 1024, maximum: 1_048_576 }),
  /** Browser sessions (and renders in progress) a user may have open at once. */
  maxBrowserSessions: Type.Integer({ minimum: 0, maximum: 10_000 }),
});
export type PlanLimits = Static<typeof PlanLimitsSchema>;

/** Built-in plans; `SANDBOXD_PLANS` (a JSON object of plan name to limits) replaces or adds plans. */
export const DEFAULT_PLANS: Record<string, PlanLimits> = {
  free: { executionsPerMinute: 60, maxConcurrentVms: 2, maxTotalVcpus: 4, diskMb: 4096, maxBrowserSessions: 2 },
  pro: { executionsPerMinute: 600, maxConcurrentVms: 10, maxTotalVcpus: 32, diskMb: 8192, maxBrowserSessions: 10 },
  enterprise: { executionsPerMinute: 6000, maxConcurrentVms: 100, maxTotalVcpus: 400, diskMb: 16_384, maxBrowserSessions: 100 },
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

/** Parses decimals strictly: "0.5", "2" yes, ".5", "1e3" and "" no. */
function decimal(min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw new Error(`expected a number like 0.5, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`expected a number from ${min} to ${max}, got ${n}`);
    return n;
  };
}

function oneOf<T extends string>(...values: T[]) {
  return (raw: string): T => {
    if (!(values as string[]).includes(raw)) throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };
}

/** `HOST:PORT` of a listener of its own (`[v6]:port` too), or `off`. */
function listenAddress(raw: string): string {
  if (raw === 'off') return 'off';
  const match = /^(.+):(\d{1,5})$/.exec(raw);
  if (!match || Number(match[2]) > 65_535) throw new Error(`expected HOST:PORT or off, got "${raw}"`);
  return raw;
}

/** A listener address `listenAddress` accepted, as host (brackets of an IPv6 address removed) and port. */
export function splitListenAddress(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':');
  return { host: listen.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(listen.slice(at + 1)) };
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

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a comma-separated list of durations such as "5s,30s,2m,1h,1d" (units ms, s, m, h, d) into milliseconds. */
function durationList(raw: string): number[] {
  return raw.split(',').map((part) => {
    const match = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(part);
    if (!match) throw new Error(`expected durations like "5s,30s,2m,1h" (units ms, s, m, h, d), got "${part.trim()}"`);
    const ms = Number(match[1]) * DURATION_UNITS_MS[match[2]!]!;
    if (ms < 1 || ms > 7 * 86_400_000) throw new Error(`each delay must be from 1ms to 7d, got "${part.trim()}"`);
    return ms;
  });
}

/** `open`, or a JSON egress policy with the API's field names. */
function egressPolicySetting(raw: string): EgressPolicy {
  if (raw.trim() === 'open') return OPEN_EGRESS_POLICY;
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    throw new Error('expected `open` or a JSON object');
  }
  const flag = (name: string) => {
    if (value[name] === undefined) return true;
    if (typeof value[name] !== 'boolean') throw new Error(`${name} must be true or false`);
    return value[name] as boolean;
  };
  const list = (name: string) => {
    const entries = value[name] ?? [];
    if (!Array.isArray(entries) || !entries.every((e) => typeof e === 'string')) throw new Error(`${name} must be an array of strings`);
    return entries as string[];
  };
  try {
    return normalizeEgressPolicy({ allowPackageManagers: flag('allow_package_managers'), allowHttp: flag('allow_http'), allowHttps: flag('allow_https'), allowedDomains: list('allowed_domains'), allowedCidrs: list('allowed_cidrs') });
  } catch (error) {
    throw new Error((error as Error).message);
  }
}

/** Parses `1.1.1.1, 127.0.0.1:5353, ::1, [2001:db8::1]:53` into what `dns.Resolver#setServers` takes. */
function dnsServers(raw: string): string[] {
  return raw.split(',').map((part) => {
    const entry = part.trim();
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
    const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(entry);
    const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [entry, undefined];
    const family = net.isIP(address);
    if (family === 0) throw new Error(`expected IP addresses with an optional port (a name cannot be a resolver), got "${entry}"`);
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw new Error(`port out of range in "${entry}"`);
    if (port === undefined) return address;
    return family === 6 ? `[${address}]:${port}` : `${address}:${port}`;
  });
}

/** Parses `registry.example.com, 127.0.0.1:5000` into registry host[:port] names as image references write them. */
function registryList(raw: string): string[] {
  return raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((entry) => {
      if (!/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:\d{1,5})?$/.test(entry)) throw new Error(`expected registry host names with an optional port (registry.example.com, 127.0.0.1:5000), got "${entry}"`);
      return entry;
    });
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
  // diskMb and maxBrowserSessions came later than the other limits: a plan that leaves one out keeps its built-in
  // namesake's, or free's.
  const limits = Type.Object({
    ...PlanLimitsSchema.properties,
    diskMb: Type.Optional(PlanLimitsSchema.properties.diskMb),
    maxBrowserSessions: Type.Optional(PlanLimitsSchema.properties.maxBrowserSessions),
  });
  const schema = Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_-]*$' }), limits);
  if (!Value.Check(schema, parsed)) {
    const first = Value.Errors(schema, parsed)[0];
    throw new Error(`invalid plans: ${first ? `${first.instancePath || '/'} ${first.message}` : 'bad shape'}`);
  }
  const given = Object.fromEntries(
    Object.entries(parsed).map(([name, limits]) => {
      const builtin = DEFAULT_PLANS[name] ?? DEFAULT_PLANS.free!;
      return [name, { diskMb: builtin.diskMb, maxBrowserSessions: builtin.maxBrowserSessions, ...limits }];
    }),
  );
  return { ...DEFAULT_PLANS, ...given };
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
  appDomain: {
    env: 'SANDBOXD_APP_DOMAIN',
    description:
      'Domain whose subdomains {vm_id}-{port}.<domain> serve VM ports at / (the direct_url; needs wildcard DNS to this server, and a wildcard certificate for https); default localhost, which browsers resolve to this machine',
    parse: (raw: string) => {
      const domain = raw.trim().toLowerCase().replace(/\.$/, '');
      if (!/^(?=.{1,200}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(domain)) throw new Error(`"${raw}" is not a domain name`);
      return domain;
    },
    fallback: () => 'localhost',
  },
  shareLinkTtlSeconds: {
    env: 'SANDBOXD_SHARE_LINK_TTL_SECONDS',
    description: 'Lifetime of a private share link (and the preview cookie it sets) when the share itself expires later or never',
    parse: integer(60, 30 * 86400),
    fallback: () => 86_400,
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
  cacheRetentionDays: {
    env: 'SANDBOXD_CACHE_RETENTION_DAYS',
    description:
      'Guest images and snapshot sets that no sandboxd on the machine used for this many days are removed when a server starts (each server marks what it uses at start and hourly); 0 keeps everything',
    parse: integer(0, 3650),
    fallback: () => 7,
  },
  snapshotDir: {
    env: 'SANDBOXD_SNAPSHOT_DIR',
    description:
      'Where VM snapshots (one per vCPU variant, keyed by image) are kept, shared by every clone on the machine; the VM user must be able to traverse it',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => '/var/lib/sandboxd/snapshots',
  },
  vmSnapshotDir: {
    env: 'SANDBOXD_VM_SNAPSHOT_DIR',
    description:
      "Where this server keeps the snapshots users take of their VMs and the memory and disks of paused VMs (on disk, not tmpfs; the VM user must be able to traverse it); default /var/lib/sandboxd/vm-snapshots/<hash of the data directory>",
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => '',
  },
  runDir: {
    env: 'SANDBOXD_RUN_DIR',
    description:
      'Directory for per-VM run directories (sockets, disk overlays, console logs); must be traversable by the VM user; default /var/lib/sandboxd/run/<hash of the data directory>',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => '',
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
  consoleSessionTtlSeconds: {
    env: 'SANDBOXD_CONSOLE_SESSION_TTL_SECONDS',
    description: 'Lifetime of a web console session (held by the server; signing out ends it at once); default SANDBOXD_ACCESS_TOKEN_TTL_SECONDS',
    parse: integer(60, 30 * 86400),
    fallback: () => null as number | null,
  },
  signInWindowSeconds: {
    env: 'SANDBOXD_SIGN_IN_WINDOW_SECONDS',
    description: 'Window in which failed sign-ins (password or API key, console, POST /v1/auth/token, the CLI login page) are counted',
    parse: integer(10, 86_400),
    fallback: () => 900,
  },
  signInMaxFailuresPerUsername: {
    env: 'SANDBOXD_SIGN_IN_MAX_FAILURES_PER_USERNAME',
    description: 'Failed sign-ins of one username in the window after which its password sign-ins are refused (429 RATE_LIMITED) until the window moves on',
    parse: integer(1, 100_000),
    fallback: () => 10,
  },
  signInMaxFailuresPerAddress: {
    env: 'SANDBOXD_SIGN_IN_MAX_FAILURES_PER_ADDRESS',
    description: 'Failed sign-ins from one source address (an IPv6 /64) in the window after which its sign-ins are refused (429 RATE_LIMITED); behind a proxy set SANDBOXD_TRUST_PROXY',
    parse: integer(1, 1_000_000),
    fallback: () => 50,
  },
  cliAuthTtlSeconds: {
    env: 'SANDBOXD_CLI_AUTH_TTL_SECONDS',
    description: 'How long a command-line login (sandbox login) may wait for approval and exchange',
    parse: integer(60, 3600),
    fallback: () => 600,
  },
  cliAuthIntervalSeconds: {
    env: 'SANDBOXD_CLI_AUTH_POLL_INTERVAL_SECONDS',
    description: 'Seconds a command-line login waits between polls of POST /api/cli-auth/exchange (faster polls answer CLI_AUTH_SLOW_DOWN)',
    parse: integer(1, 60),
    fallback: () => 5,
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
    description:
      'JSON object of plan name to {executionsPerMinute, maxConcurrentVms, maxTotalVcpus, diskMb}, merged over the built-in free/pro/enterprise (diskMb: each VM\'s root disk in MiB, at least 1024; a plan without it keeps its built-in namesake\'s, else free\'s)',
    parse: plans,
    fallback: () => DEFAULT_PLANS,
  },
  trustProxy: {
    env: 'SANDBOXD_TRUST_PROXY',
    description: 'Trust X-Forwarded-* headers (set when behind a reverse proxy)',
    parse: booleanFlag,
    fallback: () => false,
  },
  nodeId: {
    env: 'SANDBOXD_NODE_ID',
    description: 'Name of this node (recorded with each VM it runs); default the host name',
    parse: (raw: string) => {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(raw)) throw new Error('use 1-63 letters, digits, dots, dashes or underscores');
      return raw;
    },
    fallback: () => os.hostname(),
  },
  internalListen: {
    env: 'SANDBOXD_INTERNAL_LISTEN',
    description:
      "HOST:PORT of the internal listener, the only one that serves the cluster's internal routes (/internal/*, each request signed with the cluster secret for this node), or `off` (single node only); default 127.0.0.1 on the public port + 2. In a cluster, set this node's address on the private network",
    parse: listenAddress,
    fallback: () => '',
  },
  internalUrl: {
    env: 'SANDBOXD_INTERNAL_URL',
    description: "Base URL the other nodes of a cluster reach this node's internal listener at; default http://<SANDBOXD_INTERNAL_LISTEN> (set it when a proxy or another name stands in front)",
    parse: (raw: string) => new URL(raw).toString().replace(/\/$/, ''),
    fallback: () => '',
  },
  clusterSecret: {
    env: 'SANDBOXD_CLUSTER_SECRET',
    description: 'Key that signs requests between the nodes of a cluster (at least 32 characters); unset = generated once and shared through the store',
    parse: (raw: string) => {
      if (raw.length < 32) throw new Error('must be at least 32 characters');
      return raw;
    },
    fallback: () => null as string | null,
  },
  nodeHeartbeatSeconds: {
    env: 'SANDBOXD_NODE_HEARTBEAT_SECONDS',
    description: 'How often this node records its heartbeat and load in the store, and looks for dead nodes',
    parse: integer(1, 300),
    fallback: () => 5,
  },
  nodeDeadAfterSeconds: {
    env: 'SANDBOXD_NODE_DEAD_AFTER_SECONDS',
    description: 'A node whose last heartbeat is older than this is declared dead and its VMs recorded lost (more than twice the heartbeat interval)',
    parse: integer(2, 3600),
    fallback: () => 30,
  },
  nodeVcpus: {
    env: 'SANDBOXD_NODE_VCPUS',
    description: 'vCPUs this node offers to VMs (placement capacity); default the host\'s CPUs',
    parse: integer(1, 4096),
    fallback: () => os.availableParallelism(),
  },
  nodeMemoryMb: {
    env: 'SANDBOXD_NODE_MEMORY_MB',
    description: "Memory this node offers to VMs, MiB (placement capacity); default the host's memory less 1 GiB",
    parse: integer(256, 16_777_216),
    fallback: () => Math.max(256, Math.floor(os.totalmem() / 1_048_576) - 1024),
  },
  nodeVmSlots: {
    env: 'SANDBOXD_NODE_VM_SLOTS',
    description: 'Most VMs this node runs at once (placement capacity); a full node sends new VMs to another live node',
    parse: integer(1, 100_000),
    fallback: () => 256,
  },
  adminListen: {
    env: 'SANDBOXD_ADMIN_LISTEN',
    description:
      'HOST:PORT of the admin listener (worker control: GET /workers, drain, undrain, deployment drain; needs the admin token), or `off`; default 127.0.0.1 on the public port + 1',
    parse: listenAddress,
    fallback: () => '',
  },
  adminToken: {
    env: 'SANDBOXD_ADMIN_TOKEN',
    description: 'Bearer token of the admin listener (at least 32 characters); unset = generated at the first start and kept in DATA_DIR/admin-token (mode 0600)',
    parse: (raw: string) => {
      if (raw.length < 32) throw new Error('must be at least 32 characters');
      return raw;
    },
    fallback: () => null as string | null,
  },
  sshListen: {
    env: 'SANDBOXD_SSH_LISTEN',
    description:
      'HOST:PORT of the SSH gateway (`ssh <vm_id or session_id>@host` with a key registered at /v1/ssh-keys: shell, commands, scp/sftp, -L forwarding into the VM), or `off`; default the API host on port 2222',
    parse: listenAddress,
    fallback: () => '',
  },
  sshHostKeyFile: {
    env: 'SANDBOXD_SSH_HOST_KEY_FILE',
    description: "The SSH gateway's host key (an OpenSSH private key file); unset = an ed25519 key generated at the first start and kept in DATA_DIR/ssh-host-key (mode 0600)",
    parse: (raw: string) => raw,
    fallback: () => null as string | null,
  },
  sshMaxConnections: {
    env: 'SANDBOXD_SSH_MAX_CONNECTIONS',
    description: 'Connections the SSH gateway holds at once, logged in or not; more are closed at once',
    parse: integer(1, 1_000_000),
    fallback: () => 1000,
  },
  sshMaxConnectionsPerSource: {
    env: 'SANDBOXD_SSH_MAX_CONNECTIONS_PER_SOURCE',
    description: 'Connections the SSH gateway holds at once from one source (an IPv4 address, or an IPv6 /64); more are closed at once',
    parse: integer(1, 1_000_000),
    fallback: () => 50,
  },
  sshLoginGraceSeconds: {
    env: 'SANDBOXD_SSH_LOGIN_GRACE_SECONDS',
    description: 'Seconds an SSH connection has from its TCP connect to be authenticated; it is dropped then (as OpenSSH\'s LoginGraceTime)',
    parse: integer(1, 3600),
    fallback: () => 30,
  },
  sshMaxAuthTries: {
    env: 'SANDBOXD_SSH_MAX_AUTH_TRIES',
    description: 'Failed authentication attempts an SSH connection may make; the last one closes it (as OpenSSH\'s MaxAuthTries)',
    parse: integer(1, 100),
    fallback: () => 6,
  },
  sshMaxChannels: {
    env: 'SANDBOXD_SSH_MAX_CHANNELS',
    description: 'Channels (shells, commands, sftp, -L forwardings) one SSH connection may have open at once; more are refused (as OpenSSH\'s MaxSessions)',
    parse: integer(1, 10_000),
    fallback: () => 10,
  },
  strictKillOwnership: {
    env: 'SANDBOXD_STRICT_KILL_OWNERSHIP',
    description: "A kill that a node's queue worker picks up for a VM another node owns is re-dispatched once to the owner's queue (else it is dropped as stale)",
    parse: booleanFlag,
    fallback: () => false,
  },
  defaultVmLifetimeSeconds: {
    env: 'SANDBOXD_DEFAULT_VM_LIFETIME_SECONDS',
    description: 'VM lifetime of a session that does not ask for vm_lifetime_seconds (also of the session an execute without session_id creates)',
    parse: integer(20, 2_592_000),
    fallback: () => 300,
  },
  defaultVcpus: {
    env: 'SANDBOXD_DEFAULT_VCPUS',
    description: 'vCPUs of a session that does not ask for vcpu_count: 1, 2, 4, 6 or 8; keep it among SANDBOXD_WARM_VCPUS so such sessions get pooled VMs',
    parse: (raw: string): 1 | 2 | 4 | 6 | 8 => {
      const value = Number(raw.trim());
      if (![1, 2, 4, 6, 8].includes(value)) throw new Error(`expected 1, 2, 4, 6 or 8, got "${raw}"`);
      return value as 1 | 2 | 4 | 6 | 8;
    },
    fallback: (): 1 | 2 | 4 | 6 | 8 => 2,
  },
  defaultMemoryMb: {
    env: 'SANDBOXD_DEFAULT_MEMORY_MB',
    description: 'Guest memory of a session that does not ask for memory_mb; this size has snapshots of its own (no balloon work on restore) and is what the warm pool holds',
    parse: integer(128, 8192),
    fallback: () => 512,
  },
  executionOutputLimitBytes: {
    env: 'SANDBOXD_EXECUTION_OUTPUT_LIMIT_BYTES',
    description: 'Output kept per stream (stdout, stderr) of each execution; the rest is dropped and flagged truncated',
    parse: integer(1024, 256 * 1024 * 1024),
    fallback: () => 1024 * 1024,
  },
  executionMaxSeconds: {
    env: 'SANDBOXD_EXECUTION_MAX_SECONDS',
    description: 'Longest an execution may run inside its VM (the VM lifetime also bounds it)',
    parse: integer(1, 30 * 86400),
    fallback: () => 3600,
  },
  uploadLimitBytes: {
    env: 'SANDBOXD_UPLOAD_LIMIT_BYTES',
    description: 'Largest file (or tar archive) accepted by POST /upload; larger answers 413',
    parse: integer(1, 64 * 1024 * 1024 * 1024),
    fallback: () => 1024 * 1024 * 1024,
  },
  downloadJsonLimitBytes: {
    env: 'SANDBOXD_DOWNLOAD_JSON_LIMIT_BYTES',
    description: 'Largest file POST /download returns as base64 JSON (413 beyond; Accept: application/octet-stream streams any size)',
    parse: integer(1, 4 * 1024 * 1024 * 1024),
    fallback: () => 64 * 1024 * 1024,
  },
  accel: {
    env: 'SANDBOXD_ACCEL',
    description: 'VM accelerator: auto (KVM when a test boot works, else TCG with a warning), kvm or tcg',
    parse: oneOf<'auto' | 'kvm' | 'tcg'>('auto', 'kvm', 'tcg'),
    fallback: (): 'auto' | 'kvm' | 'tcg' => 'auto',
  },
  vmNetwork: {
    env: 'SANDBOXD_VM_NETWORK',
    description: 'Guest network: user (outbound internet through QEMU user-mode networking; host addresses blocked) or none',
    parse: oneOf<'user' | 'none'>('user', 'none'),
    fallback: (): 'user' | 'none' => 'user',
  },
  vmNetworkUnguarded: {
    env: 'SANDBOXD_VM_NETWORK_UNGUARDED',
    description:
      "Start VMs with user networking even when the host's network guard is not active (it needs root and nftables): their guests then reach the host's loopback (this API, the database) and private networks. Default false: such VMs are refused (NETWORK_GUARD_INACTIVE)",
    parse: booleanFlag,
    fallback: () => false,
  },
  poolSize: {
    env: 'SANDBOXD_POOL_SIZE',
    description: 'Restored, idle VMs kept ready per warm vCPU variant (0 disables the warm pool)',
    parse: integer(0, 64),
    fallback: () => 1,
  },
  maxConcurrentRestores: {
    env: 'SANDBOXD_MAX_CONCURRENT_RESTORES',
    description:
      'VM restores in progress at once (0 = no limit); more wait their turn. Default: the host CPU count, since under TCG a restore is CPU-bound and a crowd of them makes each slower',
    parse: integer(0, 1024),
    fallback: () => os.availableParallelism(),
  },
  minFreeDiskMb: {
    env: 'SANDBOXD_MIN_FREE_DISK_MB',
    description:
      'Free space (MiB) the filesystem of the run directory must keep: below it new VMs are refused with 507 HOST_STORAGE_LOW (and the warm pool is not refilled) until space is freed; VMs already running may still grow to their plan\'s diskMb',
    parse: integer(0, 64 * 1024 * 1024),
    fallback: () => 2048,
  },
  hostCpuReserve: {
    env: 'SANDBOXD_HOST_CPU_RESERVE',
    description:
      'CPUs no single VM may take from the host: each VM is capped at min(its vCPUs, host CPUs minus this), so a guest busy on all its vCPUs leaves the server and the other VMs this much; 0 caps a VM at its vCPUs only',
    parse: decimal(0, 1024),
    fallback: () => 0.5,
  },
  vmCpuWeight: {
    env: 'SANDBOXD_VM_CPU_WEIGHT',
    description:
      'CPU weight of all VMs together (their parent cgroup) against the processes beside it, 1-10000 (cgroup v2 cpu.weight; v1 cpu.shares = weight x 10.24); 100 is the kernel default, lower lets the server and other host processes win when the CPU is contended',
    parse: integer(1, 10_000),
    fallback: () => 100,
  },
  warmVcpus: {
    env: 'SANDBOXD_WARM_VCPUS',
    description: 'Comma-separated vCPU variants snapshotted and pooled at start (others are snapshotted on first use)',
    parse: (raw: string) => {
      const values = raw.split(',').map((v) => Number(v.trim()));
      if (values.some((v) => ![1, 2, 4, 6, 8].includes(v))) throw new Error('expected a list of 1, 2, 4, 6, 8');
      return values as (1 | 2 | 4 | 6 | 8)[];
    },
    fallback: (): (1 | 2 | 4 | 6 | 8)[] => [2],
  },
  keepVmsOnShutdown: {
    env: 'SANDBOXD_KEEP_VMS_ON_SHUTDOWN',
    description: 'Leave VMs running on a graceful shutdown, to re-adopt them at the next start (after a crash they are always re-adopted)',
    parse: booleanFlag,
    fallback: () => false,
  },
  agentReconnectSeconds: {
    env: 'SANDBOXD_AGENT_RECONNECT_SECONDS',
    description:
      "How long the server keeps trying to reconnect to a live VM's agent after the link dropped; a VM whose agent is not back by then is killed and recorded with end_reason error (end_detail agent_lost)",
    parse: integer(1, 3600),
    fallback: () => 30,
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
  usageRequiresKey: {
    env: 'SANDBOXD_USAGE_REQUIRES_KEY',
    description:
      'Require credentials for GET /v1/sessions/usage/{session_id}. Default false: a request without any credential gets the usage figures of the session it names (the published InstaVM Python client asks so); its 122-bit random id is the secret',
    parse: booleanFlag,
    fallback: () => false,
  },
  eventPollIntervalMs: {
    env: 'SANDBOXD_EVENT_POLL_INTERVAL_MS',
    description: 'How often outbox consumers (webhook dispatcher, event stream) look for events committed on other nodes and for due retries; commits on this node wake them at once',
    parse: integer(20, 60_000),
    fallback: () => 1000,
  },
  webhookRetryScheduleMs: {
    env: 'SANDBOXD_WEBHOOK_RETRY_SCHEDULE',
    description: 'Delays before each webhook retry, comma-separated (units ms, s, m, h, d); the last delay repeats when SANDBOXD_WEBHOOK_MAX_ATTEMPTS asks for more',
    parse: durationList,
    fallback: () => [5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000],
  },
  webhookMaxAttempts: {
    env: 'SANDBOXD_WEBHOOK_MAX_ATTEMPTS',
    description: 'Attempts per webhook delivery (the first one included) before it is marked failed',
    parse: integer(1, 100),
    fallback: () => 8,
  },
  webhookTimeoutMs: {
    env: 'SANDBOXD_WEBHOOK_TIMEOUT_MS',
    description: 'Time a receiver has to answer one webhook attempt (connect, headers and body), in milliseconds',
    parse: integer(100, 120_000),
    fallback: () => 10_000,
  },
  webhookConcurrency: {
    env: 'SANDBOXD_WEBHOOK_CONCURRENCY',
    description: 'Webhook attempts in flight at once on this node (one endpoint gets at most a quarter of them)',
    parse: integer(1, 1000),
    fallback: () => 16,
  },
  webhookSecretGraceSeconds: {
    env: 'SANDBOXD_WEBHOOK_SECRET_GRACE_SECONDS',
    description: 'After a signing-secret rotation, how long the old secret keeps signing next to the new one',
    parse: integer(0, 30 * 86400),
    fallback: () => 86_400,
  },
  webhookAllowPrivate: {
    env: 'SANDBOXD_WEBHOOK_ALLOW_PRIVATE',
    description: 'Allow webhook URLs that resolve to loopback, private, link-local or metadata addresses (self-hosting, tests)',
    parse: booleanFlag,
    fallback: () => false,
  },
  templateInsecureRegistries: {
    env: 'SANDBOXD_TEMPLATE_INSECURE_REGISTRIES',
    description:
      'Registries (host[:port], as an image reference names them) that template builds reach over plain HTTP or unverified TLS, comma-separated; they are the operator\'s choice, so they may also be on private addresses. Default: none',
    parse: registryList,
    fallback: (): string[] => [],
  },
  templateRegistryAllowPrivate: {
    env: 'SANDBOXD_TEMPLATE_REGISTRY_ALLOW_PRIVATE',
    description: 'Let template builds pull from registries whose host is or resolves to a loopback, private, link-local or metadata address (default false; the insecure registries are always allowed)',
    parse: booleanFlag,
    fallback: () => false,
  },
  templateGitAllowPrivate: {
    env: 'SANDBOXD_TEMPLATE_GIT_ALLOW_PRIVATE',
    description: 'Let template builds clone git_clone_url from hosts that are or resolve to loopback, private, link-local or metadata addresses (default false; set it for git servers on your own network)',
    parse: booleanFlag,
    fallback: () => false,
  },
  templateGitTimeoutSeconds: {
    env: 'SANDBOXD_TEMPLATE_GIT_TIMEOUT_SECONDS',
    description: "Longest the host's clone of a template's git_clone_url may take; the build fails at git_clone beyond it",
    parse: integer(5, 86_400),
    fallback: () => 300,
  },
  templateGitMaxMb: {
    env: 'SANDBOXD_TEMPLATE_GIT_MAX_MB',
    description: "Largest repository (its bare clone on the host, MiB) a template build copies into its VM; the clone is stopped and the build fails at git_clone beyond it",
    parse: integer(1, 1024 * 1024),
    fallback: () => 512,
  },
  browserVcpus: {
    env: 'SANDBOXD_BROWSER_VCPUS',
    description: "vCPUs of each browser session's VM (and of a render's); the browser template's snapshot is made per count",
    parse: integer(1, 8),
    fallback: () => 1,
  },
  browserMemoryMb: {
    env: 'SANDBOXD_BROWSER_MEMORY_MB',
    description: "Memory of each browser VM, MiB (Chromium with one page takes ~450 MiB of it); its snapshot is booted with exactly this",
    parse: integer(512, 8192),
    fallback: () => 1024,
  },
  browserPoolSize: {
    env: 'SANDBOXD_BROWSER_POOL_SIZE',
    description:
      'Restored, warmed browser VMs kept ready (0 disables): a session created from the pool is ready in milliseconds, one restored on demand in seconds. Each idle one holds its memory',
    parse: integer(0, 16),
    fallback: () => 0,
  },
  browserIdleTimeoutSeconds: {
    env: 'SANDBOXD_BROWSER_IDLE_TIMEOUT_SECONDS',
    description: 'A browser session with no interaction for this long is closed (its `expires_at`); a session may ask for less with `idle_timeout_seconds`',
    parse: integer(10, 86_400),
    fallback: () => 300,
  },
  browserSessionMaxSeconds: {
    env: 'SANDBOXD_BROWSER_SESSION_MAX_SECONDS',
    description: 'Longest a browser session may live, however busy (its VM is killed then)',
    parse: integer(60, 7 * 86_400),
    fallback: () => 3600,
  },
  desktopVcpus: {
    env: 'SANDBOXD_DESKTOP_VCPUS',
    description: "vCPUs of every desktop session's VM (template `desktop`, computer use); the desktop template's snapshot is made for it",
    parse: integer(1, 8),
    fallback: () => 2,
  },
  desktopMemoryMb: {
    env: 'SANDBOXD_DESKTOP_MEMORY_MB',
    description: "Memory of every desktop VM, MiB (the desktop itself takes ~150 MiB; Chromium on it ~450 MiB more); its snapshot is booted with exactly this",
    parse: integer(512, 8192),
    fallback: () => 1536,
  },
  desktopPoolSize: {
    env: 'SANDBOXD_DESKTOP_POOL_SIZE',
    description: 'Restored desktop VMs kept ready (0 disables): a desktop session then starts in milliseconds instead of a restore. Each idle one holds its memory',
    parse: integer(0, 16),
    fallback: () => 0,
  },
  viewerTokenTtlSeconds: {
    env: 'SANDBOXD_VIEWER_TOKEN_TTL_SECONDS',
    description: 'How long a desktop viewer URL (GET /v1/computeruse/{session_id}/viewer-url) and its WebSocket token work; a viewer connected by then stays connected',
    parse: integer(10, 86_400),
    fallback: () => 600,
  },
  maxRecordingMb: {
    env: 'SANDBOXD_MAX_RECORDING_MB',
    description: 'Largest desktop recording saved to the object store, MiB (a larger one is recorded as failed; it stays downloadable in the VM while it runs)',
    parse: integer(1, 65_536),
    fallback: () => 512,
  },
  templateMaxBuildsPerUser: {
    env: 'SANDBOXD_TEMPLATE_MAX_BUILDS_PER_USER',
    description: 'Template builds a user may have under way or queued at once (default 2); more are refused with 429 QUOTA_EXCEEDED until one ends. Builds run one at a time per node, so this keeps one user from filling the queue',
    parse: integer(1, 1000),
    fallback: () => 2,
  },
  templatePostBuildTimeoutSeconds: {
    env: 'SANDBOXD_TEMPLATE_POST_BUILD_TIMEOUT_SECONDS',
    description: "Longest a template's post_build_cmd may run in its build VM; it is killed and the build fails at post_build_cmd beyond it",
    parse: integer(1, 86_400),
    fallback: () => 1800,
  },
  dnsServers: {
    env: 'SANDBOXD_DNS_SERVERS',
    description:
      'DNS servers that custom domain verification asks for TXT records, comma-separated IP addresses with an optional port (1.1.1.1, 127.0.0.1:5353, [2001:db8::53]:53); default: the system resolvers (/etc/resolv.conf)',
    parse: dnsServers,
    fallback: () => null as string[] | null,
  },
  dnsTimeoutMs: {
    env: 'SANDBOXD_DNS_TIMEOUT_MS',
    description: 'Longest one TXT lookup of a custom domain verification may take, all tries included, in milliseconds',
    parse: integer(100, 60_000),
    fallback: () => 5000,
  },
  customDomainCheckIntervalSeconds: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_CHECK_INTERVAL_SECONDS',
    description: 'Seconds between two background checks of the TXT record of a pending custom domain (POST /v1/custom-domains/{domain_id}/verify checks at once)',
    parse: integer(1, 86_400),
    fallback: () => 60,
  },
  customDomainPendingSeconds: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_PENDING_SECONDS',
    description: 'How long a custom domain claim may stay pending: one not verified by then fails as expired and must be made anew (default 7 days)',
    parse: integer(60, 90 * 86_400),
    fallback: () => 7 * 86_400,
  },
  customDomainReverifySeconds: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_REVERIFY_SECONDS',
    description: "Seconds between two re-checks of a verified custom domain's TXT record (default 6 hours); see SANDBOXD_CUSTOM_DOMAIN_REVERIFY_MISSES",
    parse: integer(1, 30 * 86_400),
    fallback: () => 6 * 3600,
  },
  customDomainReverifyMisses: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_REVERIFY_MISSES',
    description: 'Re-checks in a row that do not find a verified custom domain\'s TXT record (or cannot look it up) after which the claim fails (record_missing) and the domain stops being served (default 3)',
    parse: integer(1, 1000),
    fallback: () => 3,
  },
  customDomainRefreshSeconds: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_REFRESH_SECONDS',
    description:
      'How often each node reloads the set of verified custom domains from the store, so that a domain verified on another node of a cluster is served here too (a deletion acts at once everywhere)',
    parse: integer(1, 3600),
    fallback: () => 5,
  },
  objectStore: {
    env: 'SANDBOXD_OBJECT_STORE',
    description: 'Where objects kept outside the database (screenshots) go: local (files under SANDBOXD_OBJECT_STORE_DIR) or s3 (any S3-compatible store, SANDBOXD_S3_*)',
    parse: oneOf<'local' | 's3'>('local', 's3'),
    fallback: (): 'local' | 's3' => 'local',
  },
  objectStoreDir: {
    env: 'SANDBOXD_OBJECT_STORE_DIR',
    description: 'Directory of the local object store (created mode 0700); default <data directory>/objects',
    parse: (raw: string) => path.resolve(text(raw)),
    fallback: () => '',
  },
  s3Endpoint: {
    env: 'SANDBOXD_S3_ENDPOINT',
    description: 'URL of the S3-compatible store (https://s3.eu-west-1.amazonaws.com, http://minio.internal:9000); required with SANDBOXD_OBJECT_STORE=s3',
    parse: (raw: string) => {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new Error(`expected an http:// or https:// URL, got "${raw}"`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`expected an http:// or https:// URL, got "${raw}"`);
      return url.toString().replace(/\/$/, '');
    },
    fallback: () => null as string | null,
  },
  s3Region: {
    env: 'SANDBOXD_S3_REGION',
    description: 'Region the S3 requests are signed for (stores without regions take any, often us-east-1 or auto)',
    parse: (raw: string) => {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) throw new Error(`expected a region name such as eu-west-1, got "${raw}"`);
      return raw;
    },
    fallback: () => 'us-east-1',
  },
  s3Bucket: {
    env: 'SANDBOXD_S3_BUCKET',
    description: 'Bucket that holds the objects (it must exist); required with SANDBOXD_OBJECT_STORE=s3',
    parse: (raw: string) => {
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(raw)) throw new Error(`expected a bucket name of 3-63 lower-case letters, digits, dots and hyphens, got "${raw}"`);
      return raw;
    },
    fallback: () => null as string | null,
  },
  s3Prefix: {
    env: 'SANDBOXD_S3_PREFIX',
    description: 'Key prefix in the bucket, so that several servers or other data can share it (sandboxd/prod keeps keys under sandboxd/prod/); default none',
    parse: (raw: string) => {
      const prefix = raw.replace(/^\/+|\/+$/g, '');
      if (prefix === '') return prefix;
      if (prefix.length > 256) throw new Error(`expected at most 256 characters, got ${prefix.length}`);
      try {
        assertObjectKey(prefix);
      } catch {
        throw new Error(`expected /-separated segments of letters, digits, dots, dashes and underscores, got "${raw}"`);
      }
      return prefix;
    },
    fallback: () => '',
  },
  s3AccessKeyId: {
    env: 'SANDBOXD_S3_ACCESS_KEY_ID',
    description: 'Access key id for the S3 store, with SANDBOXD_S3_SECRET_ACCESS_KEY; both unset = the AWS SDK\'s default credentials (instance role, ~/.aws)',
    parse: text,
    fallback: () => null as string | null,
  },
  s3SecretAccessKey: {
    env: 'SANDBOXD_S3_SECRET_ACCESS_KEY',
    description: 'Secret access key for the S3 store, with SANDBOXD_S3_ACCESS_KEY_ID',
    parse: text,
    fallback: () => null as string | null,
  },
  s3ForcePathStyle: {
    env: 'SANDBOXD_S3_FORCE_PATH_STYLE',
    description: 'Address the bucket in the path (http://endpoint/bucket/key), as MinIO and most self-hosted stores need; false = as a subdomain (http://bucket.endpoint/key)',
    parse: booleanFlag,
    fallback: () => true,
  },
  egressDefault: {
    env: 'SANDBOXD_EGRESS_DEFAULT',
    description:
      'The egress policy of VMs and sessions created without one: `open` (every public destination, the default) or a JSON policy like {"allow_package_managers":true,"allow_http":true,"allow_https":true,"allowed_domains":["example.com"],"allowed_cidrs":[]}',
    parse: egressPolicySetting,
    fallback: () => OPEN_EGRESS_POLICY,
  },
  egressDnsServers: {
    env: 'SANDBOXD_EGRESS_DNS_SERVERS',
    description: 'DNS servers the egress resolver of restricted VMs forwards allowed names to, comma-separated IPv4 addresses with an optional port; default: the system resolvers (/etc/resolv.conf)',
    parse: (raw: string) => raw.split(',').map((entry) => `${parseUpstream(entry).host}:${parseUpstream(entry).port}`),
    fallback: () => null as string[] | null,
  },
  egressLogRetentionDays: {
    env: 'SANDBOXD_EGRESS_LOG_RETENTION_DAYS',
    description: 'Days the egress log (GET /v1/vms/{vm_id}/egress/log) keeps connection attempts',
    parse: integer(1, 3650),
    fallback: () => 7,
  },
  egressRefusedEventSeconds: {
    env: 'SANDBOXD_EGRESS_REFUSED_EVENT_SECONDS',
    description: 'At most one egress.refused event per VM in this many seconds (the next one counts the refusals in between)',
    parse: integer(0, 86_400),
    fallback: () => 60,
  },
  vaultKey: {
    env: 'SANDBOXD_VAULT_KEY',
    description:
      'The key vault secrets and the vault CA key are encrypted with at rest (AES-256-GCM under a key derived from it; at least 32 characters). Default: a random key generated once into DATA_DIR/vault.key (mode 0600), never the database; back it up apart from database backups. Every node of a cluster needs the same: set it on each, or join nodes with a token from `sandboxd cluster token`, which carries it. A node without the deployment\'s key (checked by its fingerprint in the store) refuses vault use (503 VAULT_KEY_UNAVAILABLE). Changing it makes stored secrets unreadable (set them again); values sealed under the old default (derived from the auth secret) are re-sealed under the key in use at the first start',
    parse: (raw: string) => {
      if (raw.length < 32) throw new Error('must be at least 32 characters (e.g. openssl rand -base64 48)');
      return raw;
    },
    fallback: () => null as string | null,
  },
  vaultUpstreamCaFile: {
    env: 'SANDBOXD_VAULT_UPSTREAM_CA_FILE',
    description:
      "A PEM file of extra CA certificates that hosts a vault secret is bound to may present (a private API's CA); the public roots bundled with Node are always trusted",
    parse: (raw: string) => {
      // Read at start: a missing or wrong file is a configuration error that names the variable.
      if (!fs.readFileSync(raw, 'utf8').includes('-----BEGIN CERTIFICATE-----')) throw new Error(`${raw} has no PEM certificate`);
      return raw;
    },
    fallback: () => null as string | null,
  },
  vaultLogRetentionDays: {
    env: 'SANDBOXD_VAULT_LOG_RETENTION_DAYS',
    description: 'Days the request log of vaults (GET /v1/vaults/{vault_id}/request-logs) keeps entries',
    parse: integer(1, 3650),
    fallback: () => 30,
  },
  screenshotRetentionDays: {
    env: 'SANDBOXD_SCREENSHOT_RETENTION_DAYS',
    description: 'Days stored browser screenshots are kept in the object store before they are removed; 0 keeps them forever',
    parse: integer(0, 3650),
    fallback: () => 7,
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
/** Cluster settings `sandboxd node join` wrote into the data directory (core/cluster/join.ts). */
export const JOINED_SETTINGS_FILE = 'cluster.json';

/** The settings of the data directory's JOINED_SETTINGS_FILE, if there is one: the environment wins over them. */
function joinedSettings(dataDir: string): Record<string, string> {
  const file = path.join(dataDir, JOINED_SETTINGS_FILE);
  if (!fs.existsSync(file)) return {};
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0].startsWith('SANDBOXD_')));
  } catch (error) {
    throw new ConfigError(`${file}: not the JSON \`sandboxd node join\` writes (${(error as Error).message}); join again or delete it`);
  }
}

export function loadConfig(environment: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const dataDir = overrides.dataDir ?? (environment[settings.dataDir.env] ? settings.dataDir.parse(environment[settings.dataDir.env]!) : settings.dataDir.fallback());
  const env = { ...joinedSettings(dataDir), ...environment };
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
  // One run root per data directory: a server's start-up recovery reaps every VM in its root that it does not know.
  const dataDirKey = createHash('sha256').update(result.dataDir).digest('hex').slice(0, 12);
  if (!result.runDir) result.runDir = path.join('/var/lib/sandboxd/run', dataDirKey);
  // Snapshots of users' VMs belong to this server's store, like its run directories.
  if (!result.vmSnapshotDir) result.vmSnapshotDir = path.join('/var/lib/sandboxd/vm-snapshots', dataDirKey);
  if (!result.publicUrl) result.publicUrl = `http://${result.host.includes(':') ? `[${result.host}]` : result.host}:${result.port}`;
  resolveInternalListener(result);
  if (!result.adminListen) result.adminListen = `127.0.0.1:${result.port === 0 ? 0 : result.port + 1}`;
  if (!result.sshListen) result.sshListen = `${result.host.includes(':') ? `[${result.host}]` : result.host}:${result.port === 0 ? 0 : 2222}`;
  if (result.nodeDeadAfterSeconds <= 2 * result.nodeHeartbeatSeconds) {
    throw new ConfigError(`SANDBOXD_NODE_DEAD_AFTER_SECONDS (${result.nodeDeadAfterSeconds}) must be more than twice SANDBOXD_NODE_HEARTBEAT_SECONDS (${result.nodeHeartbeatSeconds})`);
  }
  if (!result.objectStoreDir) result.objectStoreDir = path.join(result.dataDir, 'objects');
  if (result.objectStore === 's3') checkS3Settings(result);
  if (!(result.defaultPlan in result.plans)) {
    throw new ConfigError(`SANDBOXD_DEFAULT_PLAN: "${result.defaultPlan}" is not a plan (known: ${Object.keys(result.plans).join(', ')})`);
  }
  return result;
}

/**
 * The internal listener's address and the URL the other nodes reach it at: the URL follows the listener unless
 * given (with port 0 it is only known once bound, and stays empty here). Internal routes are never on the public
 * listener, so an internal URL that names the public port with no listener of its own configured (the set-up
 * from before they were split) is refused with what to change, rather than leaving a cluster that cannot reach
 * its VMs.
 */
function resolveInternalListener(config: Config): void {
  const listenGiven = config.internalListen !== '';
  if (!listenGiven) config.internalListen = `127.0.0.1:${config.port === 0 ? 0 : config.port + 2}`;
  if (config.internalListen === 'off') {
    if (config.databaseUrl) throw new ConfigError('SANDBOXD_INTERNAL_LISTEN: cannot be off in cluster mode (SANDBOXD_DATABASE_URL set): the other nodes reach this node\u2019s VMs through it');
    return;
  }
  const { host, port } = splitListenAddress(config.internalListen);
  if (config.internalUrl) {
    const url = new URL(config.internalUrl);
    const urlPort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    if (!listenGiven && urlPort === config.port) {
      throw new ConfigError(
        `SANDBOXD_INTERNAL_URL (${config.internalUrl}) names the public port ${config.port}, but internal routes are served only by the internal listener: set SANDBOXD_INTERNAL_LISTEN to this node's private address and port (e.g. 10.0.0.2:${config.port + 2}) and SANDBOXD_INTERNAL_URL to match (or leave it unset)`,
      );
    }
    return;
  }
  if (['0.0.0.0', '::', ''].includes(host)) {
    throw new ConfigError(`SANDBOXD_INTERNAL_URL: required when SANDBOXD_INTERNAL_LISTEN (${config.internalListen}) listens on every address: name the address the other nodes reach this node at`);
  }
  if (port !== 0) config.internalUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** An S3 object store needs a place and, if any, a whole key pair; each missing piece is named. */
function checkS3Settings(config: Config): void {
  for (const key of ['s3Endpoint', 's3Bucket'] as const) {
    if (!config[key]) throw new ConfigError(`${settings[key].env}: required when SANDBOXD_OBJECT_STORE=s3 (${settings[key].description})`);
  }
  if (config.s3AccessKeyId && !config.s3SecretAccessKey) throw new ConfigError('SANDBOXD_S3_SECRET_ACCESS_KEY: required when SANDBOXD_S3_ACCESS_KEY_ID is set');
  if (config.s3SecretAccessKey && !config.s3AccessKeyId) throw new ConfigError('SANDBOXD_S3_ACCESS_KEY_ID: required when SANDBOXD_S3_SECRET_ACCESS_KEY is set');
}

/** The documented settings, for the README and `sandboxd --help`. */
export function describeSettings(): { env: string; description: string }[] {
  return Object.values(settings).map(({ env, description }) => ({ env, description }));
}
