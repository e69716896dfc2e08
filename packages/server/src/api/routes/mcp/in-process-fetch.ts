/**
 * A `fetch` that answers from this app, in process (Fastify's `inject`), for the client library the MCP tools
 * call. Each call is a full request through the app's routes, hooks, authentication and error handler, exactly as
 * if it had come over the network with the same headers, and is logged and audited as such; it just skips the
 * socket. That keeps the MCP endpoint a client of the API rather than a second way into the core.
 */
import type { App } from '../../types.ts';

/** What the injected requests carry of the MCP request they serve. */
export interface Forwarded {
  /** The Host the MCP request came with (it reached the API, so it names no preview or custom domain). */
  host: string | undefined;
  /** The MCP caller's address, as the API's request.ip saw it (audit records show it). */
  remoteAddress: string;
  /** The MCP request's id: each call's id is this plus a counter, so the log ties the calls to the request. */
  requestId: string;
}

/** What the app keeps of a caller's request id (app.ts): longer ones would be replaced, and the tie lost. */
const MAX_REQUEST_ID_LENGTH = 64;

type InjectMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** Statuses whose Response may have no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

export function inProcessFetch(app: App, forwarded: Forwarded): typeof fetch {
  let calls = 0;
  return async (input, init) => {
    const request = new Request(input, init);
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) throw abortError(signal);
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    if (forwarded.host) headers.host = forwarded.host;
    const requestId = `${forwarded.requestId}.${++calls}`;
    if (requestId.length <= MAX_REQUEST_ID_LENGTH) headers['x-request-id'] = requestId;
    // Bytes of whatever the library sent (JSON text, a multipart form with its boundary in content-type).
    const payload = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const injected = app.inject({
      method: request.method as InjectMethod,
      url: url.pathname + url.search,
      headers,
      remoteAddress: forwarded.remoteAddress,
      ...(payload ? { payload } : {}),
    });
    // inject cannot be cancelled: a caller that gives up stops waiting, and the request finishes in the app.
    const answered = signal
      ? await new Promise<Awaited<typeof injected>>((resolve, reject) => {
          const onAbort = () => reject(abortError(signal));
          signal.addEventListener('abort', onAbort, { once: true });
          injected.then(
            (value) => (signal.removeEventListener('abort', onAbort), resolve(value)),
            (error: unknown) => (signal.removeEventListener('abort', onAbort), reject(error)),
          );
        })
      : await injected;
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answered.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, String(one));
    }
    const body = NULL_BODY.has(answered.statusCode) || request.method === 'HEAD' ? null : new Uint8Array(answered.rawPayload);
    return new Response(body, { status: answered.statusCode, statusText: answered.statusMessage, headers: responseHeaders });
  };
}
