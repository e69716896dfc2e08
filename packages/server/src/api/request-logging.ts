/**
 * One log line per request (method, path, status, time, user) under the request's id. Query values that
 * may carry credentials are masked; headers and bodies are never logged here.
 */
import type { FastifyInstance } from 'fastify';

const SECRET_QUERY_KEYS = /^(api_key|token|access_token|key|secret|password|connect_token|sandboxd_token)$/i;

/** The URL with the values of credential-like query parameters replaced by `***`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const key of [...params.keys()]) if (SECRET_QUERY_KEYS.test(key)) params.set(key, '***');
  return `${url.slice(0, q)}?${params.toString()}`;
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
