/**
 * Settings of browser sessions: their VMs' size, the pool, idle and total lifetimes, how long screenshots are
 * kept.
 */
import { integer, type Setting, type SettingValues } from './kit.ts';

/** The settings of the browser block, by name (each name is unique across the blocks). */
export const browserSettings = {
  browserVcpus: {
    env: 'SANDBOXD_BROWSER_VCPUS',
    description: "vCPUs of each browser session's VM (and of a render's); the browser template's snapshot is made per count",
    parse: integer(1, 8),
    fallback: () => 1,
  },
  browserMemoryMb: {
    env: 'SANDBOXD_BROWSER_MEMORY_MB',
    description: 'Memory of each browser VM, MiB (Chromium with one page takes ~450 MiB of it); its snapshot is booted with exactly this',
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
  screenshotRetentionDays: {
    env: 'SANDBOXD_SCREENSHOT_RETENTION_DAYS',
    description: 'Days stored browser screenshots are kept in the object store before they are removed; 0 keeps them forever',
    parse: integer(0, 3650),
    fallback: () => 7,
  },
} satisfies Record<string, Setting<unknown>>;

/** The browser block of the configuration. */
export type BrowserConfig = SettingValues<typeof browserSettings>;
