/**
 * Ports in tests: every listener a test opens is on a port the kernel picks, never a default. Another sandboxd
 * on the machine (a developer's, another test file's, CI's neighbour) holds the defaults: the API on 8080, the
 * admin listener on the public port + 1, the internal listener on + 2 and the SSH gateway on 2222.
 */
import fs from 'node:fs';
import net from 'node:net';

/**
 * A loopback port that was free a moment ago (for a listener that must be told its port in advance), chosen below
 * the kernel's ephemeral range. A port the kernel handed out for `listen(0)` and took back goes to the next
 * `listen(0)` often enough that a server told that port would find its own admin or SSH listener (ephemeral, started
 * first) on it: EADDRINUSE, seen in CI. Below the range, only another test's freePort can pick the same port, and the
 * trial bind below refuses one that is taken.
 */
export async function freePort(): Promise<number> {
  const [ephemeralLow] = ephemeralRange();
  const low = Math.max(1024, ephemeralLow - 12_000);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (ephemeralLow - low));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port found in ${low}..${ephemeralLow - 1}`);
}

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && high && low > 2024) return [low, high];
  } catch {
    // Not Linux: the IANA range, the default elsewhere.
  }
  return [49152, 65535];
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
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
