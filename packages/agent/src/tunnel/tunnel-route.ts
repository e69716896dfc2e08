/**
 * HTTP/2 `CONNECT` with `:authority <loopback host>:<port>`: a TCP tunnel to a port inside the guest. The agent
 * connects first and only then answers 200, so the host learns at once whether anything listens there
 * (502 `PORT_UNREACHABLE` otherwise). Then bytes are piped both ways, half-closes included.
 */
import { connect, type Socket } from 'node:net';
import { AgentFailure } from '../http/agent-failure.ts';
import type { RouteRequest } from '../http/router.ts';

/** Loopback names a tunnel may target; anything else would make the agent a proxy into the guest's network. */
const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/;

/** Parses `host:port` or `[v6]:port`. */
export function parseAuthority(authority: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(authority);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new AgentFailure('BAD_REQUEST', `tunnel authority "${authority}" is not host:port`);
  }
  if (!LOOPBACK.test(host)) throw new AgentFailure('BAD_REQUEST', `tunnels reach loopback addresses only, not ${host}`);
  // A literal address: no resolver round trip (and no thread-pool use) for "localhost".
  return { host: host === 'localhost' ? '127.0.0.1' : host, port };
}

/** Handler of `CONNECT` requests. */
export async function tunnelRoute({ stream, headers }: RouteRequest): Promise<void> {
  const { host, port } = parseAuthority(String(headers[':authority'] ?? ''));
  // Half-open allowed: either side may finish sending while the other still has bytes to deliver.
  const socket: Socket = connect({ host, port, allowHalfOpen: true });
  const abandon = (): void => {
    socket.destroy();
  };
  stream.once('close', abandon);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new AgentFailure('PORT_UNREACHABLE', `nothing accepts connections on ${host}:${port} in the guest (${code})`);
  }
  if (stream.destroyed || stream.closed) {
    socket.destroy();
    return;
  }
  socket.setNoDelay(true);
  stream.respond({ ':status': 200 });
  socket.on('error', () => stream.close(0x8 /* NGHTTP2_CANCEL */));
  socket.on('close', () => {
    if (!stream.closed && !stream.writableEnded) stream.close(0x8);
  });
  stream.pipe(socket);
  socket.pipe(stream);
}
