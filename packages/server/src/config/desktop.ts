/** Settings of desktop sessions (computer use): their VMs' size, the pool, viewer URLs, recordings. */
import { integer, type Setting, type SettingValues } from './kit.ts';

/** The settings of the desktop block, by name (each name is unique across the blocks). */
export const desktopSettings = {
  desktopVcpus: {
    env: 'SANDBOXD_DESKTOP_VCPUS',
    description: "vCPUs of every desktop session's VM (template `desktop`, computer use); the desktop template's snapshot is made for it",
    parse: integer(1, 8),
    fallback: () => 2,
  },
  desktopMemoryMb: {
    env: 'SANDBOXD_DESKTOP_MEMORY_MB',
    description: 'Memory of every desktop VM, MiB (the desktop itself takes ~150 MiB; Chromium on it ~450 MiB more); its snapshot is booted with exactly this',
    parse: integer(512, 8192),
    fallback: () => 1536,
  },
  desktopPoolSize: {
    env: 'SANDBOXD_DESKTOP_POOL_SIZE',
    description:
      'Restored desktop VMs kept ready (0 disables): a desktop session then starts in milliseconds instead of a restore. Each idle one holds its memory',
    parse: integer(0, 16),
    fallback: () => 0,
  },
  viewerTokenTtlSeconds: {
    env: 'SANDBOXD_VIEWER_TOKEN_TTL_SECONDS',
    description:
      'How long a desktop viewer URL (GET /v1/computeruse/{session_id}/viewer-url) and its WebSocket token work; a viewer connected by then stays connected',
    parse: integer(10, 86_400),
    fallback: () => 600,
  },
  maxRecordingMb: {
    env: 'SANDBOXD_MAX_RECORDING_MB',
    description: 'Largest desktop recording saved to the object store, MiB (a larger one is recorded as failed; it stays downloadable in the VM while it runs)',
    parse: integer(1, 65_536),
    fallback: () => 512,
  },
} satisfies Record<string, Setting<unknown>>;

/** The desktop block of the configuration. */
export type DesktopConfig = SettingValues<typeof desktopSettings>;
