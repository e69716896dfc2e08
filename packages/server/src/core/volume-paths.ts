/**
 * Where a volume may be mounted in a guest: an absolute, normalized path (no `//`, `.`, `..` or trailing `/`) of
 * plain characters, not over the guest's system (its root, or at or below a directory the guest's programs and
 * agent need, which a mount would hide). The API's schema carries the same rule as a pattern, so a bad path is
 * a 422 there; the core checks again for callers that skip the schema.
 */

/** Directories no volume may be mounted at or below (`/opt/sandboxd`: the agent's files in template images). */
export const RESERVED_MOUNT_ROOTS = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib32',
  '/lib64',
  '/opt/sandboxd',
  '/proc',
  '/run',
  '/sbin',
  '/sys',
  '/usr',
] as const;
/** Directories no volume may be mounted at (below them is fine): they hold what the guest needs. */
export const RESERVED_MOUNT_POINTS = ['/opt', '/root', '/tmp', '/var'] as const;

const names = (dirs: readonly string[]) => dirs.map((dir) => dir.slice(1)).join('|');

/** The rule as one regular expression (JSON Schema `pattern`). */
export const MOUNT_PATH_PATTERN =
  `^(?!/(?:${names(RESERVED_MOUNT_ROOTS)})(?:/|$))(?!/(?:${names(RESERVED_MOUNT_POINTS)})$)` + String.raw`(?:/(?!\.\.?(?:/|$))[A-Za-z0-9._-]+)+$`;

export const MAX_MOUNT_PATH_LENGTH = 256;

const MOUNT_PATH = new RegExp(MOUNT_PATH_PATTERN);

/** Why `path` cannot be a mount path, or null when it can. */
export function mountPathProblem(path: string): string | null {
  if (path.length > MAX_MOUNT_PATH_LENGTH) return `a mount path has at most ${MAX_MOUNT_PATH_LENGTH} characters`;
  if (!MOUNT_PATH.test(path)) {
    return `mount path ${JSON.stringify(path)} must be absolute and normalized, of letters, digits, '.', '_' and '-', and not / nor at ${RESERVED_MOUNT_POINTS.join(', ')} nor at or below ${RESERVED_MOUNT_ROOTS.join(', ')}`;
  }
  return null;
}
