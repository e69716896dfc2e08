/**
 * HTTP for the client: credentials on every request, a time limit per attempt, retries of what is safe to
 * retry, and errors from the one table in errors.ts. Uses only `fetch` (Node.js 18+, browsers).
 *
 * Retried, up to `maxRetries` times, after a random wait between half and all of `retryDelay · 2^n` (n: the retries
 * so far; the randomness keeps many clients that failed together from coming back together), or as long as
 * `Retry-After` says when the server sends it (never jittered: it is the server's word; above a minute the error
 * goes to the caller instead):
 * - a connection that failed before the request was sent (refused, DNS, connect time-out): any method;
 * - 429 RATE_LIMITED (the server refused before doing anything): any method;
 * - 502, 503, 504 and other connection failures: only idempotent requests (GET, HEAD, PUT, DELETE,
 *   or a call marked idempotent). A POST /execute that may have run is never sent twice.
 * Never retried: time-outs of the client (the caller's budget is spent), 429 QUOTA_EXCEEDED, other 4xx, 500.
 */
import type { StreamedBody } from './multipart.ts';
import type { StreamFetch } from './node-request.ts';
import { decodeBase64 } from './base64.ts';
import type { HttpMethod, JsonBody, JsonResponse, PathParams, paths, QueryParams } from './api-types.ts';
import { withCamelCase, type WithCamelCase } from './camel-case.ts';
import { errorFor, NetworkError, SandboxdError, type ErrorFacts, type OperationKind, type ValidationIssue } from './errors.ts';
import { VERSION } from './version.ts';

export interface TransportSettings {
  baseUrl: string;
  apiKey: string | undefined;
  accessToken: string | undefined;
  /** Per attempt, milliseconds. */
  timeout: number;
  maxRetries: number;
  /** First back-off, milliseconds; doubles on each retry, and each wait is a random 50–100 % of it (`backoffDelayMs`). */
  retryDelay: number;
  fetch: typeof fetch;
  /** Sends a request whose body is a stream without holding it (`node-request.ts`); absent: such bodies are not streamed. */
  streamFetch?: StreamFetch;
  headers: Record<string, string>;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | null | undefined>;
  /** A JSON body. */
  json?: unknown;
  /** A multipart body. */
  form?: FormData;
  /** A raw body (a tarball) and its content type. */
  blob?: { data: Blob; contentType: string };
  /** A body sent as it is read (a large upload: `multipart.ts`), through `streamFetch`; opened again for each attempt. */
  stream?: StreamedBody;
  headers?: Record<string, string>;
  /** Decides the error class where the status alone does not (e.g. 404 on a session → SessionError). */
  kind?: OperationKind;
  /** Safe to send twice. Default: true for GET, HEAD, PUT, DELETE; false otherwise. */
  idempotent?: boolean;
  /** Milliseconds for this request (each attempt), instead of the client's `timeout`. */
  timeout?: number;
  signal?: AbortSignal;
  /** Leave out the API key (the login flow's unauthenticated calls). */
  anonymous?: boolean;
}

export type ResponseType = 'json' | 'bytes' | 'text' | 'none' | 'stream';

/** The longest `Retry-After` the client waits on its own; a longer one is the caller's decision. */
const MAX_RETRY_AFTER_MS = 60_000;
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
/** Errors that mean the connection was never made, so nothing reached the server. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

/** Waits `ms`; an aborted `signal` rejects with its reason. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Every error code in an error's cause chain (Node puts the socket error under `cause`, sometimes in an AggregateError). */
function errorCodes(error: unknown, depth = 0): string[] {
  if (!error || typeof error !== 'object' || depth > 5) return [];
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === 'string' ? [e.code] : [];
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => errorCodes(x, depth + 1)) : [];
  return [...own, ...nested, ...errorCodes(e.cause, depth + 1)];
}

/**
 * The wait before retry number `attempt + 1` (`attempt` counts from 0): a random value in [0.5, 1.0] × `baseMs · 2^attempt`
 * ("equal jitter", the common variant of full jitter: never shorter than half, so a retry does not come back at once).
 * `random` is `Math.random` unless a test pins it.
 */
export function backoffDelayMs(baseMs: number, attempt: number, random: () => number = Math.random): number {
  const ceiling = baseMs * 2 ** attempt;
  return ceiling * (0.5 + 0.5 * random());
}

/** `Retry-After` in seconds, from delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

interface ErrorBody {
  detail?: unknown;
  code?: unknown;
  retry_after?: unknown;
  execution_id?: unknown;
  session_id?: unknown;
  selector?: unknown;
}

function describeValidation(issues: ValidationIssue[]): string {
  return issues.map((issue) => `${(issue.loc ?? []).join('.')}: ${issue.msg}`).join('; ');
}

export class Transport {
  constructor(readonly settings: TransportSettings) {}

  /** A typed call of an operation of the served OpenAPI document. */
  async call<P extends keyof paths, M extends HttpMethod>(
    path: P,
    method: M,
    options: RequestOptions & { params?: PathParams<P, M>; query?: Partial<QueryParams<P, M>>; json?: JsonBody<P, M> } = {},
  ): Promise<WithCamelCase<JsonResponse<P, M>>> {
    const url = String(path).replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = (options.params as Record<string, unknown> | undefined)?.[name];
      if (value === undefined || value === null) throw new TypeError(`missing path parameter ${name} for ${String(path)}`);
      return encodeURIComponent(String(value));
    });
    // `request` has added the camelCase getters (`camel-case.ts`) to the JSON it parsed.
    return (await this.request(method.toUpperCase(), url, options, method === 'head' ? 'none' : 'json')) as WithCamelCase<JsonResponse<P, M>>;
  }

  /** Sends a request with retries; returns the body as asked. */
  async request(method: string, path: string, options: RequestOptions = {}, responseType: ResponseType = 'json'): Promise<unknown> {
    const idempotent = options.idempotent ?? IDEMPOTENT.has(method);
    const operation = `${method} ${path}`;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(method, path, options, responseType, operation);
      if (outcome.ok) return outcome.value;
      const { error, retryable, retryAfterMs } = outcome;
      const retry = attempt < this.settings.maxRetries && (retryable === 'always' || (retryable === 'idempotent' && idempotent));
      if (!retry) throw error;
      const delay = retryAfterMs ?? backoffDelayMs(this.settings.retryDelay, attempt);
      if (delay > MAX_RETRY_AFTER_MS) throw error;
      await sleep(delay, options.signal);
    }
  }

  private headersFor(options: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.settings.headers };
    if (!options.anonymous) {
      if (this.settings.apiKey) headers['x-api-key'] = this.settings.apiKey;
      else if (this.settings.accessToken) headers.authorization = `Bearer ${this.settings.accessToken}`;
    }
    // Browsers do not let a page set User-Agent; elsewhere it tells the server's log who called.
    if (typeof (globalThis as { document?: unknown }).document === 'undefined' && !Object.keys(headers).some((h) => h.toLowerCase() === 'user-agent')) {
      headers['user-agent'] = `sandboxd-sdk-js/${VERSION}`;
    }
    return { ...headers, ...options.headers };
  }

  private urlFor(path: string, query: RequestOptions['query']): string {
    const url = new URL(this.settings.baseUrl.replace(/\/+$/, '') + path);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }

  private async attempt(
    method: string,
    path: string,
    options: RequestOptions,
    responseType: ResponseType,
    operation: string,
  ): Promise<
    { ok: true; value: unknown } | { ok: false; error: SandboxdError | unknown; retryable: 'always' | 'idempotent' | 'never'; retryAfterMs?: number }
  > {
    const timeoutMs = options.timeout ?? this.settings.timeout;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onCallerAbort = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) onCallerAbort();
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });

    const headers = this.headersFor(options);
    let body: string | FormData | Blob | undefined;
    let stream: ReadableStream<Uint8Array> | undefined;
    if (options.form) body = options.form;
    else if (options.blob) {
      body = options.blob.data;
      headers['content-type'] = options.blob.contentType;
    } else if (options.stream) {
      if (!this.settings.streamFetch) throw new TypeError('this client cannot send a streamed body (Node.js with its own fetch only)');
      stream = options.stream.open();
      headers['content-type'] = options.stream.contentType;
      headers['content-length'] = String(options.stream.length);
    } else if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }

    try {
      let response: Response;
      try {
        response = stream
          ? await this.settings.streamFetch!(this.urlFor(path, options.query), { method, headers, body: stream, signal: controller.signal })
          : await this.settings.fetch(this.urlFor(path, options.query), { method, headers, body: body ?? null, signal: controller.signal });
      } catch (error) {
        if (options.signal?.aborted) return { ok: false, error: options.signal.reason ?? error, retryable: 'never' };
        if (timedOut) {
          return {
            ok: false,
            error: new NetworkError(`${operation}: no answer within ${timeoutMs} ms`, { operation, cause: error, timedOut: true }),
            retryable: 'never',
          };
        }
        const codes = errorCodes(error);
        const notSent = codes.some((code) => NOT_SENT_CODES.has(code));
        const cause = (error as { cause?: { message?: unknown } })?.cause?.message;
        const why = codes[0] ?? (typeof cause === 'string' && cause ? cause : String((error as Error)?.message ?? error));
        return {
          ok: false,
          error: new NetworkError(`${operation}: cannot reach ${this.settings.baseUrl} (${why})`, { operation, cause: error }),
          retryable: notSent ? 'always' : 'idempotent',
        };
      }

      if (response.ok) {
        if (responseType === 'stream') return { ok: true, value: response };
        if (responseType === 'none') {
          await response.body?.cancel();
          return { ok: true, value: undefined };
        }
        if (responseType === 'bytes') {
          const type = response.headers.get('content-type') ?? '';
          if (type.includes('application/json')) return { ok: true, value: base64Content((await response.json()) as { content?: unknown }) };
          return { ok: true, value: new Uint8Array(await response.arrayBuffer()) };
        }
        const text = await response.text();
        if (responseType === 'text' || text === '') return { ok: true, value: responseType === 'text' ? text : undefined };
        try {
          return { ok: true, value: withCamelCase(JSON.parse(text) as unknown) };
        } catch {
          throw new SandboxdError(`${operation} answered ${response.status} with a body that is not JSON: ${text.slice(0, 100)}`, {
            status: response.status,
            operation,
            body: text,
          });
        }
      }
      return await this.failure(response, operation, options.kind);
    } catch (error) {
      // Reading the body failed or timed out.
      if (options.signal?.aborted) return { ok: false, error: options.signal.reason ?? error, retryable: 'never' };
      if (timedOut)
        return {
          ok: false,
          error: new NetworkError(`${operation}: no complete answer within ${timeoutMs} ms`, { operation, cause: error, timedOut: true }),
          retryable: 'never',
        };
      if (error instanceof SandboxdError) throw error;
      return {
        ok: false,
        error: new NetworkError(`${operation}: the answer broke off: ${(error as Error)?.message ?? error}`, { operation, cause: error }),
        retryable: 'idempotent',
      };
    } finally {
      clearTimeout(timer);
      // A stream is read after this returns: the caller's signal must still be able to end it.
      if (responseType !== 'stream') options.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  private async failure(
    response: Response,
    operation: string,
    kind: OperationKind | undefined,
  ): Promise<{ ok: false; error: SandboxdError; retryable: 'always' | 'idempotent' | 'never'; retryAfterMs?: number }> {
    const text = await response.text().catch(() => '');
    let body: ErrorBody | undefined;
    try {
      body = text ? (JSON.parse(text) as ErrorBody) : undefined;
    } catch {
      body = undefined;
    }
    const code = typeof body?.code === 'string' ? body.code : undefined;
    const facts: ErrorFacts = {};
    let message: string;
    if (Array.isArray(body?.detail)) {
      facts.detail = body.detail as ValidationIssue[];
      message = `invalid request: ${describeValidation(facts.detail)}`;
    } else if (typeof body?.detail === 'string') {
      message = body.detail;
    } else {
      message = `${operation} answered ${response.status} ${response.statusText}`.trim();
    }
    const retryAfter = parseRetryAfter(response.headers.get('retry-after')) ?? (typeof body?.retry_after === 'number' ? body.retry_after : undefined);
    if (retryAfter !== undefined) facts.retryAfter = retryAfter;
    if (typeof body?.execution_id === 'number') facts.executionId = body.execution_id;
    if (typeof body?.session_id === 'string') facts.sessionId = body.session_id;
    if (typeof body?.selector === 'string') facts.selector = body.selector;
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const error = errorFor(
      { status: response.status, code, kind },
      message,
      { status: response.status, code, body: body ?? text, operation, ...(requestId ? { requestId } : {}) },
      facts,
    );

    const status = response.status;
    const retryable = status === 429 && code !== 'QUOTA_EXCEEDED' ? 'always' : status === 502 || status === 503 || status === 504 ? 'idempotent' : 'never';
    return { ok: false, error, retryable, ...(retryAfter !== undefined ? { retryAfterMs: retryAfter * 1000 } : {}) };
  }
}

/** The bytes of a JSON download answer (`content`, base64), for servers that answer JSON. */
function base64Content(body: { content?: unknown }): Uint8Array {
  if (typeof body.content !== 'string') throw new SandboxdError('the download answer has no content');
  return decodeBase64(body.content);
}
