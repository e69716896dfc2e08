/**
 * One health check of an app replica: `GET <path>` through the VM agent's tunnel to the port, the same path the
 * preview proxy takes to reach it. 2xx and 3xx are healthy; anything else, a refused port or no status line
 * within the timeout is not.
 */
import type { Duplex } from 'node:stream';

export interface ProbeResult {
  healthy: boolean;
  /** The status, or why there is none. */
  detail: string;
}

/** Asks the app for `path` over `open()`'s connection. */
export async function probeHealth(open: () => Promise<Duplex>, path: string, timeoutMs: number): Promise<ProbeResult> {
  let socket: Duplex | undefined;
  const timeout = new Promise<ProbeResult>((resolve) => {
    const timer = setTimeout(() => resolve({ healthy: false, detail: `no answer within ${timeoutMs} ms` }), timeoutMs);
    timer.unref();
  });
  const probe = (async (): Promise<ProbeResult> => {
    socket = await open();
    const tunnel = socket;
    return new Promise<ProbeResult>((resolve) => {
      let head = '';
      tunnel.on('data', (chunk: Buffer) => {
        head += chunk.toString('latin1');
        const end = head.indexOf('\r\n');
        if (end < 0 && head.length < 8192) return;
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.slice(0, end < 0 ? undefined : end));
        if (!status) resolve({ healthy: false, detail: 'the answer is not HTTP/1.x' });
        else {
          const code = Number(status[1]);
          resolve({ healthy: code >= 200 && code < 400, detail: `HTTP ${code}` });
        }
        tunnel.destroy();
      });
      tunnel.on('error', (error: Error) => resolve({ healthy: false, detail: error.message }));
      tunnel.on('close', () => resolve({ healthy: false, detail: 'the connection closed without an answer' }));
      tunnel.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: sandboxd-health-check\r\nConnection: close\r\n\r\n`);
    });
  })().catch((error: unknown) => ({ healthy: false, detail: (error as Error).message }));
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    socket?.destroy();
  }
}
