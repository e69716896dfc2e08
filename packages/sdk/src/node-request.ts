/**
 * Requests whose body is a stream, sent from Node.js with `node:http`/`node:https`, which read the body only as
 * fast as the connection takes it. Node.js's fetch keeps such a body in memory until it is sent
 * (nodejs/undici#4058: a 1 GiB upload took 1.2 GiB of the client's memory; through here it takes a few MiB).
 * Answers a web `Response`, so the transport reads it as it reads fetch's. Loaded only in Node.js (the modules are
 * named at run time, so browser bundlers leave them alone); the SDK's types have no Node.js, hence the small
 * interfaces below.
 */

interface NodeIncoming {
  statusCode?: number;
  statusMessage?: string;
  headers: Record<string, string | string[] | undefined>;
  resume(): void;
}
interface NodeOutgoing {
  on(event: 'error', listener: (error: Error) => void): NodeOutgoing;
  destroy(error?: Error): void;
}
interface NodeHttp {
  request(
    url: URL,
    options: { method: string; headers: Record<string, string>; signal?: AbortSignal },
    onResponse: (response: NodeIncoming) => void,
  ): NodeOutgoing;
}
interface NodeReadable {
  on(event: 'error', listener: (error: Error) => void): NodeReadable;
  pipe(destination: NodeOutgoing): void;
}
interface NodeStream {
  Readable: { fromWeb(stream: ReadableStream<Uint8Array>): NodeReadable; toWeb(stream: NodeIncoming): ReadableStream<Uint8Array> };
}

const load = (name: string) => import(/* @vite-ignore */ name) as Promise<unknown>;

/** Statuses whose answer has no body (a web Response refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

export type StreamFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: ReadableStream<Uint8Array>; signal: AbortSignal },
) => Promise<Response>;

/** The Node.js sender of stream bodies, or undefined outside Node.js. */
export function nodeStreamFetch(): StreamFetch | undefined {
  if (typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node !== 'string') return undefined;
  return async (url, init) => {
    const target = new URL(url);
    const http = (await load(target.protocol === 'https:' ? 'node:https' : 'node:http')) as NodeHttp;
    const { Readable } = (await load('node:stream')) as NodeStream;
    return new Promise<Response>((resolve, reject) => {
      const request = http.request(target, { method: init.method, headers: init.headers, signal: init.signal }, (incoming) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) {
          if (value === undefined) continue;
          for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
        }
        const status = incoming.statusCode ?? 502;
        if (NO_BODY.has(status)) incoming.resume();
        resolve(new Response(NO_BODY.has(status) ? null : Readable.toWeb(incoming), { status, statusText: incoming.statusMessage ?? '', headers }));
      });
      request.on('error', reject);
      Readable.fromWeb(init.body)
        .on('error', (error) => request.destroy(error))
        .pipe(request);
    });
  };
}
