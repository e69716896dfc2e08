/**
 * Forwards an HTTP upgrade (a WebSocket handshake) to the app in the VM and then splices the two byte
 * streams. The handshake and every frame pass through unchanged, so subprotocols, extensions and the app's
 * own 101 or refusal reach the client as the app sent them.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

export function forwardUpgrade(request: IncomingMessage, client: Duplex, head: Buffer, tunnel: Duplex, path: string, headers: [string, string][]): void {
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
  tunnel.pipe(client);
  client.pipe(tunnel);
}
