/**
 * A minimal host side for the agent's tests (the real one is the server's AgentClient, which this package
 * cannot import): link sync on a Duplex, then an HTTP/2 client session, and a GET/POST helper.
 */
import { randomBytes } from 'node:crypto';
import { connect as connectHttp2, type ClientHttp2Session } from 'node:http2';
import type { Duplex } from 'node:stream';
import { encodeHostHello, findAgentReady, LINK_NONCE_BYTES } from '../src/protocol/link-sync.ts';

/** Runs link sync on `host` and starts HTTP/2; `hellos` reports how many hellos it took. */
export async function syncAndConnect(host: Duplex, onSynced?: (hellos: number) => void): Promise<ClientHttp2Session> {
  const nonce = randomBytes(LINK_NONCE_BYTES);
  let received = Buffer.alloc(0);
  let repeats = 0;
  const send = (): void => {
    host.write(encodeHostHello(nonce, repeats++ > 0));
  };
  send();
  const timer = setInterval(send, 50);
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = findAgentReady(received, nonce);
      if (end < 0) return;
      host.off('data', onData);
      host.pause();
      clearInterval(timer);
      onSynced?.(repeats);
      if (end < received.length) host.unshift(received.subarray(end));
      resolve();
    };
    host.on('data', onData);
  });
  const session = connectHttp2('http://agent', { createConnection: () => host });
  session.on('error', () => undefined);
  return session;
}

/** Sends a request and returns the answer's status and body. */
export async function request(session: ClientHttp2Session, method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> {
  const stream = session.request({ ':method': method, ':path': path });
  let status = 0;
  stream.once('response', (headers) => {
    status = Number(headers[':status']);
  });
  stream.end(body === undefined ? undefined : JSON.stringify(body));
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return { status, body: Buffer.concat(chunks).toString() };
}

/** GET `path` and return the body. */
export async function get(session: ClientHttp2Session, path: string): Promise<string> {
  return (await request(session, 'GET', path)).body;
}
