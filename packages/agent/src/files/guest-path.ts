/** Validation of guest paths sent by the host: absolute, no NUL bytes, normalized. */
import { posix } from 'node:path';
import { AgentFailure } from '../http/agent-failure.ts';

/** Longest path accepted (Linux PATH_MAX). */
const MAX_PATH_BYTES = 4096;

/**
 * Returns the normalized absolute path, or throws `INVALID_PATH`. Relative paths are rejected rather than
 * resolved against some directory: the host must say exactly which file it means.
 */
export function parseGuestPath(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new AgentFailure('INVALID_PATH', 'a path is required');
  if (value.includes('\0')) throw new AgentFailure('INVALID_PATH', 'a path must not contain NUL bytes', value.replaceAll('\0', '\\0'));
  if (!value.startsWith('/')) throw new AgentFailure('INVALID_PATH', `path "${value}" is not absolute`, value);
  if (Buffer.byteLength(value) > MAX_PATH_BYTES) throw new AgentFailure('INVALID_PATH', `path is longer than ${MAX_PATH_BYTES} bytes`);
  const normalized = posix.normalize(value);
  // normalize keeps a trailing slash; drop it so "/a/b/" and "/a/b" name the same thing (but keep "/").
  return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
}

/** The `path` query parameter, validated. */
export function queryGuestPath(url: URL): string {
  return parseGuestPath(url.searchParams.get('path'));
}

/** Parses a permission mode given as octal text (`644`, `0755`); `fallback` when absent. */
export function parseMode(value: string | null | undefined, fallback: number): number {
  if (value === null || value === undefined || value === '') return fallback;
  if (!/^0?[0-7]{1,4}$/.test(value)) throw new AgentFailure('BAD_REQUEST', `mode "${value}" is not an octal permission like 644`);
  return Number.parseInt(value, 8);
}
