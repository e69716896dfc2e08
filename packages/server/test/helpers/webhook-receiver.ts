/**
 * A real webhook receiver for tests: a node:http server on an ephemeral 127.0.0.1 port that records
 * every request and answers as the test says (a status, or never).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** performance.now() when the body was complete. */
  at: number;
  /** Date.now() then, to compare with the event's timestamp. */
  wallMs: number;
}

/** How to answer one request: a status (and body), or 'hang' to never answer. */
export type Responder = (request: ReceivedRequest, index: number) => number | { status: number; body?: string } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  respond: Responder;
  /** Resolves once `count` requests arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => 204, port = 0): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const waiters: (() => void)[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    respond,
    async waitForRequests(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.requests.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.requests.length} requests, expected ${count} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 50);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return receiver.requests.slice(0, count);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now(), wallMs: Date.now() };
      const index = receiver.requests.push(received) - 1;
      for (const wake of waiters.splice(0)) wake();
      const answer = receiver.respond(received, index);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const { status, body } = typeof answer === 'number' ? { status: answer, body: '' } : answer;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}
