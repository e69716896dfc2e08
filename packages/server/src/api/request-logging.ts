/**
 * One log line per request (method, path, status, time, user) under the request's id. Query values that
 * may carry credentials are masked, and so are credentials nested in other values (a URL with `token=…` in a
 * parameter, an API key or a JWT anywhere); headers and bodies are never logged here.
 */
import type { FastifyInstance } from 'fastify';

const SECRET_NAMES = 'api_key|token|access_token|key|secret|password|connect_token|sandboxd_token';
const SECRET_QUERY_KEYS = new RegExp(`^(${SECRET_NAMES})$`, 'i');
/** `name=value` of a secret name inside another parameter's value (`path=…/websockify?token=…`). */
const NESTED_SECRET = new RegExp(`(^|[^A-Za-z0-9_])(${SECRET_NAMES})=[^&;#\\s]*`, 'gi');
/** A credential by its shape wherever it stands: an API key, or a JWT (`eyJ…` header, payload, signature). */
const CREDENTIAL_SHAPE = /sbx_sk_[A-Za-z0-9_-]+|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/** A value with every credential inside it masked: nested `token=…` pairs and API-key or JWT shapes. */
function redactValue(value: string): string {
  return value.replace(NESTED_SECRET, '$1$2=***').replace(CREDENTIAL_SHAPE, '***');
}

/**
 * The URL with the values of credential-like query parameters replaced by `***`, and credentials nested in
 * other values (a URL in a parameter that carries `token=…`, an API key or a JWT anywhere) masked too.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(CREDENTIAL_SHAPE, '***');
  if (q < 0) return path;
  const params = new URLSearchParams(url.slice(q + 1));
  const redacted = new URLSearchParams();
  for (const [key, value] of params) redacted.append(key, SECRET_QUERY_KEYS.test(key) ? '***' : redactValue(value));
  return `${path}?${redacted.toString()}`;
}

export function registerRequestLogging(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: redactUrl(request.url),
        statusCode: reply.statusCode,
        responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
        ...(request.principal ? { 'user.id': request.principal.userId } : {}),
      },
      'request',
    );
  });
}
