/**
 * POST /mcp: the Model Context Protocol over streamable HTTP, stateless (a new MCP server per request; no
 * sessions, so any node answers). Authenticated like every other route, by the `X-API-Key` header or a bearer
 * token; the tools then act through the client library with the caller's own credential, answered in process
 * (in-process-fetch.ts), so what a tool may do is exactly what that caller may do over the API.
 * GET and DELETE answer 405, as MCP's stateless servers do: there is no server-to-client stream and no session.
 * A request with an `Origin` other than this server's public URL is refused with 403 first (origin-guard.ts).
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { answerHttpRequest, methodNotAllowedBody } from '@sandboxd/mcp';
import { Sandboxd, VERSION } from '@sandboxd/sdk';
import type { FastifyRequest } from 'fastify';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { inProcessFetch } from './in-process-fetch.ts';
import { mcpOriginGuard } from './origin-guard.ts';
import { McpRequestBody, methodNotAllowed, postResponses } from './schemas.ts';

const DESCRIPTION =
  'Model Context Protocol endpoint (streamable HTTP transport, stateless): an MCP client (an agent host, the official SDKs) sends JSON-RPC messages here ' +
  'with `Accept: application/json, text/event-stream` and gets the responses as an event stream, with progress notifications while long tools run. ' +
  'Tools: create_sandbox, list_sandboxes, kill_sandbox, get_preview_url, run_python (stateful), run_command, get_execution, read_file, write_file, list_files, ' +
  'browser_open/navigate/click/type/press_key/content/extract/screenshot/close, computer_screenshot, computer_action; resources: sandbox://{session_id}/files/{path}. ' +
  "Tools act as the caller: each is a call of this API with the request's own credential, so its errors (NOT_FOUND for another user's sandbox, QUOTA_EXCEEDED…) come back as MCP tool errors carrying the API's code. " +
  "A request whose Origin header is present and is not this server's public URL (SANDBOXD_PUBLIC_URL) is refused with 403, as the transport specification asks (DNS rebinding).";

/** Request headers that describe this hop, not the message: not copied to the transport's Request. */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade']);

/** The client library acting as the request's caller, with the credential the request authenticated with. */
function callerClient(app: App, request: FastifyRequest, publicUrl: string): Sandboxd {
  const apiKey = request.headers['x-api-key'];
  const key = typeof apiKey === 'string' ? apiKey.trim() : '';
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(String(request.headers.authorization ?? ''))?.[1];
  const userAgent = request.headers['user-agent'];
  return new Sandboxd({
    baseUrl: publicUrl,
    // The same precedence as the authentication hooks: X-API-Key first, then the bearer token. An empty apiKey
    // keeps the library from reading SANDBOXD_API_KEY from this process's environment.
    apiKey: key,
    ...(key ? {} : { accessToken: bearer }),
    fetch: inProcessFetch(app, { host: request.headers.host, remoteAddress: request.ip, requestId: request.id }),
    headers: { 'user-agent': `sandboxd-mcp/${VERSION}${userAgent ? ` (${userAgent})` : ''}` },
  });
}

/** The Fastify request as the Web Request the MCP transport reads (its body comes separately, already parsed). */
function webRequestOf(request: FastifyRequest, publicUrl: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(new URL(request.url, publicUrl), { method: request.method, headers });
}

export function registerMcpRoutes(app: App, { services, requireAuth }: RouteContext): void {
  const publicUrl = services.config.server.publicUrl;
  const originGuard = mcpOriginGuard(publicUrl);
  const FOREIGN_ORIGIN = { 403: "Sent with an Origin header that is not this server's public URL (a web page of another site, DNS rebinding)" };

  app.post(
    '/mcp',
    {
      schema: {
        tags: ['mcp'],
        summary: 'Model Context Protocol (streamable HTTP)',
        description: DESCRIPTION,
        security: BEARER_OR_API_KEY,
        body: McpRequestBody,
        response: { ...authedResponses({}, FOREIGN_ORIGIN), ...postResponses },
      },
      onRequest: [originGuard, requireAuth],
    },
    async (request, reply) => {
      const client = callerClient(app, request, publicUrl);
      const { response, close } = await answerHttpRequest(client, webRequestOf(request, publicUrl), request.body, { version: VERSION });
      // The exchange is over when the answer is sent or the client goes away: either way the tools' server ends.
      reply.raw.once('close', () => void close());
      reply.code(response.status);
      response.headers.forEach((value, name) => void reply.header(name, value));
      if (!response.body) return reply.send();
      if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        return reply.send(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>));
      }
      return reply.send(Buffer.from(await response.arrayBuffer()));
    },
  );

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: {
        tags: ['mcp'],
        summary: method === 'GET' ? 'MCP server-to-client stream: not offered (stateless)' : 'End an MCP session: there are none (stateless)',
        description: 'Answers 405: this MCP endpoint is stateless, so only POST carries messages.',
        security: BEARER_OR_API_KEY,
        response: { ...authedResponses({}, FOREIGN_ORIGIN), ...methodNotAllowed },
      },
      onRequest: [originGuard, requireAuth],
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(methodNotAllowedBody(method)),
    });
  }
}
