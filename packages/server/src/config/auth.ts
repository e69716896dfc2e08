/**
 * Settings of users and their credentials: token and console session lifetimes, sign-in throttling, command-line
 * login, the first admin, plans.
 */
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { completePlans, DEFAULT_PLANS, GivenPlanLimitsSchema, type PlanLimits } from '../core/plans.ts';
import { booleanFlag, integer, text, type Setting, type SettingValues } from './kit.ts';

/** `SANDBOXD_PLANS`: a JSON object of plan name to limits, merged over the built-in plans (core/plans.ts). */
function plansSetting(raw: string): Record<string, PlanLimits> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('expected a JSON object of plan name to limits');
  }
  const schema = Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_-]*$' }), GivenPlanLimitsSchema);
  if (!Value.Check(schema, parsed)) {
    const first = Value.Errors(schema, parsed)[0];
    throw new Error(`invalid plans: ${first ? `${first.instancePath || '/'} ${first.message}` : 'bad shape'}`);
  }
  return completePlans(parsed);
}

/** The settings of the auth block, by name (each name is unique across the blocks). */
export const authSettings = {
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
    description:
      'Failed sign-ins from one source address (an IPv6 /64) in the window after which its sign-ins are refused (429 RATE_LIMITED); behind a proxy set SANDBOXD_TRUST_PROXY',
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
      "JSON object of plan name to {executionsPerMinute, maxConcurrentVms, maxTotalVcpus, diskMb, maxBrowserSessions, pausedRetentionSeconds, maxForkCount}, merged over the built-in free/pro/enterprise (diskMb: each VM's root disk in MiB, at least 1024; pausedRetentionSeconds: how long a paused VM is kept before it is deleted, default free 7 days, pro 30, enterprise 90; maxForkCount: the most VMs one clone request makes, 1 to 100, default free 10, pro and enterprise 100; a plan without one of the last four keeps its built-in namesake's, else free's)",
    parse: plansSetting,
    fallback: () => DEFAULT_PLANS,
  },
  usageRequiresKey: {
    env: 'SANDBOXD_USAGE_REQUIRES_KEY',
    description:
      'Require credentials for GET /v1/sessions/usage/{session_id}. Default false: a request without any credential gets the usage figures of the session it names (the published InstaVM Python client asks so); its 122-bit random id is the secret',
    parse: booleanFlag,
    fallback: () => false,
  },
} satisfies Record<string, Setting<unknown>>;

/** The auth block of the configuration. */
export type AuthConfig = SettingValues<typeof authSettings>;
