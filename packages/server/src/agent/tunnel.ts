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
    return writingBuffersOnly(stream);
  } finally {
    // The tunnel outlives the opening deadline: clear() also detaches the deadline from the stream.
    deadline.clear();
  }
}

/**
 * Node 20's Http2Stream corrupts string chunks of a vectored write: the first 16 bytes of a latin1 string
 * written through `_writev` reach the peer as garbage. Node's HTTP client does exactly that whenever a
 * request has a body (its head, a latin1 string, is corked together with the first body chunk), so every
 * proxied POST with a body reached the app as `<garbage>1.1\r\nHost: …` and answered 502. Strings are
 * turned into Buffers before they reach the stream, so it only ever writes Buffers (a copy of the few
 * string chunks; Buffers pass as they are).
 */
function writingBuffersOnly(stream: Duplex): Duplex {
  // Node's stream internals mark a Buffer chunk with the encoding 'buffer', which the type does not list.
  const BUFFER = 'buffer' as BufferEncoding;
  const asBuffer = (chunk: unknown, encoding: BufferEncoding): unknown => (typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk);
  const write = stream._write.bind(stream);
  stream._write = (chunk, encoding, callback) => write(asBuffer(chunk, encoding), typeof chunk === 'string' ? BUFFER : encoding, callback);
  const writev = stream._writev?.bind(stream);
  if (writev)
    stream._writev = (chunks, callback) =>
      writev(
        chunks.map(({ chunk, encoding }) => ({ chunk: asBuffer(chunk, encoding), encoding: typeof chunk === 'string' ? BUFFER : encoding })),
        callback,
      );
  return stream;
}
