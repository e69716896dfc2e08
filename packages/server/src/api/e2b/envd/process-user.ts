/**
 * The account a command or terminal runs as, and the directories that follow from it, as envd resolves them: the
 * default working directory is the account's home, and a relative one (or `~/…`) is taken from there.
 */
import { posix } from 'node:path';

/** The account's home: root's, or `/home/NAME` as useradd makes it (the base template's `user` has `/home/user`). */
export function homeOf(user: string): string {
  return user === 'root' ? '/root' : `/home/${user}`;
}

/** The absolute working directory for a requested one (none: the home). */
export function resolveCwd(cwd: string | undefined, home: string): string {
  if (!cwd) return home;
  if (cwd === '~') return home;
  if (cwd.startsWith('~/')) return posix.join(home, cwd.slice(2));
  return posix.resolve(home, cwd);
}
