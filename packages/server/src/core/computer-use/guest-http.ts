/**
 * One HTTP/1.1 request to a service in a VM, over one agent tunnel (Node's client speaks HTTP over the tunnel's
 * Duplex), for the server's own calls to the desktop service (screen size, recording downloads).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { AppError } from '../errors.ts';
import type { GuestAgent } from '../vm-engine.ts';

export interface GuestRequest {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  path: string;
  json?: unknown;
  timeoutMs?: number;
}

/** The response, its body still to be read (the caller consumes or destroys it). */
export async function guestRequest(agent: GuestAgent, port: number, request: GuestRequest): Promise<IncomingMessage> {
  const tunnel = await agent.openTunnel(port);
  const body = request.json === undefined ? undefined : Buffer.from(JSON.stringify(request.json));
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({
      method: request.method,
      path: request.path,
      headers: { host: `127.0.0.1:${port}`, ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}) },
      createConnection: () => tunnel as Socket,
      timeout: request.timeoutMs ?? 60_000,
    });
    outgoing.on('response', resolve);
    outgoing.on('timeout', () =>
      outgoing.destroy(new AppError('VM_UNAVAILABLE', `the desktop service did not answer ${request.method} ${request.path} in time`)),
    );
    outgoing.on('error', (error) => {
      tunnel.destroy();
      reject(
        error instanceof AppError
          ? error
          : new AppError('APP_PORT_UNREACHABLE', `the desktop service closed the connection (${(error as NodeJS.ErrnoException).code ?? error.message})`),
      );
    });
    outgoing.end(body);
  });
}

/** A JSON answer with a 2xx status, or an error naming what the desktop service said. */
export async function guestJson<T>(agent: GuestAgent, port: number, request: GuestRequest): Promise<T> {
  const response = await guestRequest(agent, port, request);
  const chunks: Buffer[] = [];
  for await (const chunk of response as AsyncIterable<Buffer>) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  const status = response.statusCode ?? 502;
  if (status < 200 || status > 299) {
    let detail = text.slice(0, 500);
    try {
      const parsed = JSON.parse(text) as { detail?: unknown };
      detail = typeof parsed.detail === 'string' ? parsed.detail : JSON.stringify(parsed.detail);
    } catch {
      // not JSON: the text itself says what happened
    }
    throw new AppError(
      status === 404 ? 'NOT_FOUND' : status === 409 ? 'CONFLICT' : 'VM_UNAVAILABLE',
      `the desktop service answered ${status} to ${request.method} ${request.path}: ${detail}`,
    );
  }
  return JSON.parse(text) as T;
}
