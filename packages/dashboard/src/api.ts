/**
 * The console's one way to call the API: same-origin fetch with the session cookie, the CSRF token (read from
 * its cookie) on every request but GET/HEAD, and API errors turned into ApiError with the server's
 * {detail, code}. Types come from the same generated OpenAPI types as the client library (api-types.ts).
 */
export type * from './api-types.ts';

/** Who is signed in (GET/POST /v1/auth/session). */
export interface ConsoleUser {
  user_id: number;
  username: string;
  is_admin: boolean;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The CSRF token of this browser's session, from its cookie: `__Host-sandboxd_csrf` when the server saw HTTPS,
 * else `sandboxd_csrf` (the server's api/dashboard/session-cookies.ts). The prefixed one wins: a bare cookie
 * next to it was not set by the server for this session.
 */
export function csrfToken(): string | null {
  const cookies = new Map<string, string>();
  for (const part of document.cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    // The first of a name is the one the browser ranks first (longest path); keep it.
    if (name && !cookies.has(name)) cookies.set(name, decodeURIComponent(rest.join('=')));
  }
  return cookies.get('__Host-sandboxd_csrf') ?? cookies.get('sandboxd_csrf') ?? null;
}

/** Called when any request answers 401: the console goes back to the sign-in page. */
let onUnauthenticated: () => void = () => {};
export function setUnauthenticatedHandler(handler: () => void): void {
  onUnauthenticated = handler;
}

function describe(body: unknown, status: number): { code: string; message: string } {
  if (body && typeof body === 'object') {
    const { detail, code } = body as { detail?: unknown; code?: unknown };
    const message =
      typeof detail === 'string' ? detail : Array.isArray(detail) ? detail.map((d: { msg?: string }) => d.msg ?? '').join('; ') : `HTTP ${status}`;
    return { code: typeof code === 'string' ? code : `HTTP_${status}`, message };
  }
  return { code: `HTTP_${status}`, message: `HTTP ${status}` };
}

/**
 * A raw request: JSON bodies are encoded, FormData goes as multipart; the Response when it is 2xx. `accept`
 * asks for another answer than JSON (a file's raw bytes); errors are still read as the API's JSON. `signal` ends
 * the request (and the reading of a streamed answer).
 */
export async function send(method: string, path: string, body?: unknown, accept = 'application/json', signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { accept };
  if (method !== 'GET' && method !== 'HEAD') {
    const csrf = csrfToken();
    if (csrf) headers['x-csrf-token'] = csrf;
  }
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const response = await fetch(path, { method, headers, body: payload, credentials: 'same-origin', ...(signal ? { signal } : {}) });
  if (response.ok) return response;
  throw await apiErrorOf(response, path);
}

/** The ApiError of an answer that is not 2xx (a 401 also sends the console back to the sign-in page). */
export async function apiErrorOf(response: Response, path: string): Promise<ApiError> {
  const parsed: unknown = await response.json().catch(() => null);
  const { code, message } = describe(parsed, response.status);
  if (response.status === 401 && !path.startsWith('/v1/auth/session')) onUnauthenticated();
  return new ApiError(response.status, code, message);
}

/** A JSON request; resolves to the parsed body (undefined for 204). */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await send(method, path, body);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** `path?k=v…` without the undefined or empty values. */
export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
