/**
 * Settings of the event outbox and its webhooks: how often consumers poll, retries, time-outs, concurrency,
 * secrets, private targets.
 */
import { booleanFlag, durationList, integer, type Setting, type SettingValues } from './kit.ts';

/** The settings of the webhooks block, by name (each name is unique across the blocks). */
export const webhooksSettings = {
  eventPollIntervalMs: {
    env: 'SANDBOXD_EVENT_POLL_INTERVAL_MS',
    description:
      'How often outbox consumers (webhook dispatcher, event stream) look for events committed on other nodes and for due retries; commits on this node wake them at once',
    parse: integer(20, 60_000),
    fallback: () => 1000,
  },
  webhookRetryScheduleMs: {
    env: 'SANDBOXD_WEBHOOK_RETRY_SCHEDULE',
    description:
      'Delays before each webhook retry, comma-separated (units ms, s, m, h, d); the last delay repeats when SANDBOXD_WEBHOOK_MAX_ATTEMPTS asks for more',
    parse: durationList,
    fallback: () => [5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000],
    defaultText: '`5s,30s,2m,10m,1h,6h,24h`',
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
} satisfies Record<string, Setting<unknown>>;

/** The webhooks block of the configuration. */
export type WebhooksConfig = SettingValues<typeof webhooksSettings>;
