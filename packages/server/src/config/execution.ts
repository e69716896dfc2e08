/** Settings of executions and file transfers: output kept, longest run, largest upload and JSON download. */
import { integer, type Setting, type SettingValues } from './kit.ts';

/** The settings of the execution block, by name (each name is unique across the blocks). */
export const executionSettings = {
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
  appUploadMaxMb: {
    env: 'SANDBOXD_APP_UPLOAD_MAX_MB',
    description: 'Largest app folder archive (gzipped tar) accepted by POST /v1/apps/deployments, in MiB; larger answers 413',
    parse: integer(1, 64 * 1024),
    fallback: () => 100,
  },
  downloadJsonLimitBytes: {
    env: 'SANDBOXD_DOWNLOAD_JSON_LIMIT_BYTES',
    description: 'Largest file POST /download returns as base64 JSON (413 beyond; Accept: application/octet-stream streams any size)',
    parse: integer(1, 4 * 1024 * 1024 * 1024),
    fallback: () => 64 * 1024 * 1024,
  },
} satisfies Record<string, Setting<unknown>>;

/** The execution block of the configuration. */
export type ExecutionConfig = SettingValues<typeof executionSettings>;
