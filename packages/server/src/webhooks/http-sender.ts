/**
 * Sends one webhook request over node:http(s), defensively, for the dispatcher:
 * - every address a host name resolves to is checked (`refuseAddress`) before connecting, and the
 *   connection goes to the checked address (the check sits in the socket's own DNS lookup, so there is
 *   no second resolution an attacker could answer differently); literal IP hosts are checked directly;
 * - redirects are never followed (the caller sees the 3xx);
 * - one deadline covers connecting, sending and reading the answer;
 * - at most `maxResponseBytes` of the answer are read, then the connection is dropped;
 * - no connection reuse, so one receiver's sockets never carry another's request.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export interface HttpSendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface HttpSendResult {
  status: number | null;
  error: string | null;
  durationMs: number;
  body: string;
  aborted: boolean;
}

export interface HttpSenderOptions {
  /** Why an IP address must not be contacted (e.g. "loopback"), or null when it may. */
  refuseAddress: (address: string) => string | null;
  /** Default 64 KiB. */
  maxResponseBytes?: number;
}

/** How much of an answer's body is kept for the caller (the rest is read up to the cap and dropped). */
const KEPT_BODY_BYTES = 4096;

class AddressRefused extends Error {}

export function createHttpSender(options: HttpSenderOptions): { send(request: HttpSendRequest): Promise<HttpSendResult> } {
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;

  const refusal = (host: string, address: string, reason: string) =>
    new AddressRefused(
      `refused: ${host === address ? address : `${host} resolves to ${address}, which`} is a ${reason} address (set SANDBOXD_WEBHOOK_ALLOW_PRIVATE=true to allow private targets)`,
    );

  // net.connect calls this instead of dns.lookup; with `all` it wants every address (Happy Eyeballs).
  const guardedLookup = ((hostname: string, lookupOptions: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    dns.lookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error);
      if (addresses.length === 0) return callback(new Error(`${hostname} has no addresses`));
      for (const { address } of addresses) {
        const reason = options.refuseAddress(address);
        if (reason) return callback(refusal(hostname, address, reason));
      }
      if (lookupOptions.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as unknown as net.LookupFunction;

  return {
    send(request) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const fail = (error: string, aborted = false): HttpSendResult => ({ status: null, error, durationMs: elapsed(), body: '', aborted });

      let url: URL;
      try {
        url = new URL(request.url);
      } catch {
        return Promise.resolve(fail(`"${request.url}" is not a URL`));
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve(fail(`${url.protocol} URLs are not supported`));
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
      if (net.isIP(host)) {
        const reason = options.refuseAddress(host);
        if (reason) return Promise.resolve(fail(refusal(host, host, reason).message));
      }
      if (request.signal?.aborted) return Promise.resolve(fail('aborted', true));

      return new Promise<HttpSendResult>((resolve) => {
        let settled = false;
        let status: number | null = null;
        const kept: Buffer[] = [];
        let keptBytes = 0;
        let readBytes = 0;
        const finish = (error: string | null, aborted = false) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          request.signal?.removeEventListener('abort', onAbort);
          req.destroy();
          resolve({ status, error, durationMs: elapsed(), body: Buffer.concat(kept).toString('utf8'), aborted });
        };
        const onAbort = () => finish('aborted: the server is shutting down', true);

        const transport = url.protocol === 'https:' ? https : http;
        const req = transport.request(url, {
          method: 'POST',
          headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
          lookup: guardedLookup,
          agent: false,
        });
        const timer = setTimeout(() => finish(`no complete answer within ${request.timeoutMs} ms`), request.timeoutMs);
        request.signal?.addEventListener('abort', onAbort, { once: true });

        req.on('response', (res) => {
          status = res.statusCode ?? null;
          res.on('data', (chunk: Buffer) => {
            readBytes += chunk.length;
            if (keptBytes < KEPT_BODY_BYTES) {
              const slice = chunk.subarray(0, KEPT_BODY_BYTES - keptBytes);
              kept.push(slice);
              keptBytes += slice.length;
            }
            if (readBytes >= maxResponseBytes) finish(null);
          });
          res.on('end', () => finish(null));
          res.on('error', () => finish(null));
          res.on('close', () => finish(null));
        });
        req.on('error', (error: NodeJS.ErrnoException) => {
          finish(error instanceof AddressRefused ? error.message : describeNetworkError(error, url));
        });
        req.end(request.body);
      });
    },
  };
}

function describeNetworkError(error: NodeJS.ErrnoException, url: URL): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return `connection refused by ${url.host}`;
    case 'ENOTFOUND':
      return `host ${url.hostname} not found`;
    case 'ECONNRESET':
      return `connection reset by ${url.host}`;
    default:
      return error.message || String(error.code ?? 'network error');
  }
}
