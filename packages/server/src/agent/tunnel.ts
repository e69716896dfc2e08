/** TCP tunnels to ports inside the guest, as HTTP/2 CONNECT streams. */
import type { Duplex } from 'node:stream';
import { TUNNEL_HOST } from '@sandboxd/agent/protocol';
import { DEFAULT_TIMEOUTS_MS, type AgentSession } from './agent-session.ts';
import type { CallOptions } from './deadline.ts';
import { errorFromAgentAnswer } from './errors.ts';

/**
 * Opens a tunnel to `port` on the guest's loopback. Resolves with a Duplex carrying the TCP bytes once the
 * agent connected; rejects with `GuestPortUnreachableError` when nothing listens there. The deadline covers
 * only the opening; the tunnel then lives until either side closes it.
 */
export async function openTunnel(session: AgentSession, port: number, options?: CallOptions): Promise<Duplex> {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`port ${port} is not 1 to 65535`);
  const operation = `openTunnel(${port})`;
  const deadline = session.deadline(operation, options, DEFAULT_TIMEOUTS_MS.control);
  try {
    const stream = session.stream(operation, { ':method': 'CONNECT', ':authority': `${TUNNEL_HOST}:${port}` }, deadline);
    const { status } = await session.response(operation, stream, deadline);
    if (status !== 200) throw errorFromAgentAnswer(status, await session.body(operation, stream, deadline), { operation, port });
    return stream;
  } finally {
    // The tunnel outlives the opening deadline: clear() also detaches the deadline from the stream.
    deadline.clear();
  }
}
