/**
 * The unprivileged system user QEMU runs as (`-runas`). It owns nothing but the VMs' writable disk overlays,
 * and the network guard matches its sockets, so a guest escaping into QEMU gets neither the server's files
 * nor the host's loopback.
 */
import { runProgram } from '../../host/run-program.ts';

/** The default name of the VM user. */
export const DEFAULT_VM_USER = 'sandboxd-vm';

export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

/** Looks a user up in the system databases (getent: also LDAP/NSS users); undefined when unknown. */
export async function lookupUser(name: string): Promise<SystemUser | undefined> {
  try {
    const { stdout } = await runProgram('getent', ['passwd', name]);
    const [, , uid, gid] = stdout.trim().split(':');
    return { name, uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
}

/**
 * Returns the VM user (or another unprivileged system user of sandboxd's, such as the template pulls' user),
 * creating it (a system user with its own group, no home and no login shell) when it does not exist. Creating
 * needs root.
 */
export async function ensureVmUser(name: string = DEFAULT_VM_USER, comment = 'sandboxd microVMs'): Promise<SystemUser> {
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(name)) throw new Error(`invalid user name ${JSON.stringify(name)}`);
  const existing = await lookupUser(name);
  if (existing) return existing;
  try {
    await runProgram('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      '--comment',
      comment,
      name,
    ]);
  } catch (error) {
    // Another server process may have created it at the same moment.
    const raced = await lookupUser(name);
    if (raced) return raced;
    throw error;
  }
  const created = await lookupUser(name);
  if (!created) throw new Error(`useradd ${name} succeeded but the user cannot be looked up`);
  return created;
}
