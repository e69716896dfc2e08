/**
 * The accounts of the guest, for programs run as a user other than root (`user` in an exec request). Read from
 * `/etc/passwd` at each request rather than through getpwnam: Node has no binding for it, and a template may add
 * users (`useradd` in a build step) while the agent runs.
 */
import { readFile } from 'node:fs/promises';

/** An account as `/etc/passwd` lists it. */
export interface GuestUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** Names as `useradd` accepts them by default (Debian's NAME_REGEX, and no longer than 32). */
export const USER_NAME_PATTERN = /^[a-z_][a-z0-9_-]{0,30}[$]?$/;

/** The account called `name`, or null when the guest has none (or no readable `/etc/passwd`). */
export async function findGuestUser(name: string, passwdPath = '/etc/passwd'): Promise<GuestUser | null> {
  if (!USER_NAME_PATTERN.test(name)) return null;
  const passwd = await readFile(passwdPath, 'utf8').catch(() => '');
  for (const line of passwd.split('\n')) {
    const [login, , uid, gid, , home] = line.split(':');
    if (login !== name || uid === undefined || gid === undefined) continue;
    const parsed = { uid: Number(uid), gid: Number(gid) };
    if (!Number.isInteger(parsed.uid) || !Number.isInteger(parsed.gid)) return null;
    return { name, ...parsed, home: home || '/' };
  }
  return null;
}

/** The environment a login of `user` has: its HOME, USER and LOGNAME over `env`. */
export function userEnvironment(user: GuestUser, env: Record<string, string | undefined>): Record<string, string | undefined> {
  return { ...env, HOME: user.home, USER: user.name, LOGNAME: user.name };
}
