/**
 * Ports in tests: every listener a test opens is on a port the kernel picks, never a default. Another sandboxd
 * on the machine (a developer's, another test file's, CI's neighbour) holds the defaults: the API on 8080, the
 * admin listener on the public port + 1, the internal listener on + 2 and the SSH gateway on 2222.
 */
import net from 'node:net';

/** A loopback port that was free a moment ago (for a listener that must be told its port in advance). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Config overrides that put the admin, internal and SSH listeners of an in-process app on ephemeral ports. */
export const EPHEMERAL_LISTENERS = { adminListen: '127.0.0.1:0', internalListen: '127.0.0.1:0', sshListen: '127.0.0.1:0' } as const;

/** The same for a server process, as its environment. */
export const EPHEMERAL_LISTENER_ENV = {
  SANDBOXD_ADMIN_LISTEN: '127.0.0.1:0',
  SANDBOXD_INTERNAL_LISTEN: '127.0.0.1:0',
  SANDBOXD_SSH_LISTEN: '127.0.0.1:0',
} as const;
