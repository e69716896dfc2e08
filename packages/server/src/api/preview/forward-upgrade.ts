/**
 * Forwards an HTTP upgrade (a WebSocket handshake) to the app in the VM and then splices the two byte
 * streams. The app's answer head (its 101, or a refusal) is read first and its headers filtered for the
 * origin the preview is served on, as for plain HTTP (response-headers.ts: a browser applies Set-Cookie from a
 * handshake answer too); after it every byte passes through unchanged, so subprotocols, extensions and frames
 * reach the client as the app sent them.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { filterResponseHead, MAX_RESPONSE_HEAD_BYTES, type PreviewOrigin } from './response-headers.ts';

const HEAD_END = Buffer.from('\r\n\r\n');

export function forwardUpgrade(
  request: IncomingMessage,
  client: Duplex,
  head: Buffer,
  tunnel: Duplex,
  path: string,
  headers: [string, string][],
  origin: PreviewOrigin,
): void {
  const lines = [`${request.method ?? 'GET'} ${path} HTTP/1.1`, ...headers.map(([name, value]) => `${name}: ${value}`), '', ''];
  const end = (): void => {
    client.destroy();
    tunnel.destroy();
  };
  client.on('error', end);
  tunnel.on('error', end);
  client.on('close', end);
  tunnel.on('close', end);
  tunnel.write(lines.join('\r\n'));
  if (head.length > 0) tunnel.write(head);
  client.pipe(tunnel);

  // The answer's head, up to its blank line; then the rest of the stream as it is.
  let received = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    received = Buffer.concat([received, chunk]);
    const at = received.indexOf(HEAD_END);
    if (at < 0) {
      if (received.length > MAX_RESPONSE_HEAD_BYTES) end();
      return;
    }
    tunnel.off('data', onData);
    // Synchronously, before any further chunk is emitted: none is lost between the listener and the pipe.
    client.write(`${filterResponseHead(received.subarray(0, at).toString('latin1'), origin)}\r\n\r\n`, 'latin1');
    const rest = received.subarray(at + HEAD_END.length);
    if (rest.length > 0) client.write(rest);
    tunnel.pipe(client);
  };
  tunnel.on('data', onData);
}
