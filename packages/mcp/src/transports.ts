/**
 * The two ways the server is reached: stdio (`sandbox mcp`, one server for the life of the process) and
 * streamable HTTP without sessions (the API server's `/mcp`: a new server and transport per request, so any node
 * can answer any request and nothing is kept between them). Both serve the same tools.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Sandboxd } from '@sandboxd/sdk';
import type { SandboxdMcpOptions } from './context.ts';
import { createSandboxdMcpServer } from './server.ts';

/**
 * Serves over this process's stdin and stdout until stdin ends. Only JSON-RPC is written to stdout: anything
 * else there would break the host's parsing, so the caller logs to stderr.
 */
export async function serveStdio(client: Sandboxd, options: SandboxdMcpOptions = {}): Promise<{ server: McpServer; closed: Promise<void> }> {
  const server = createSandboxdMcpServer(client, options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    transport.onclose = resolve;
  });
  await server.connect(transport);
  return { server, closed };
}

export interface HttpAnswer {
  /** The answer: an event stream (200) with the JSON-RPC responses and progress notifications, 202, or a JSON-RPC error. */
  response: Response;
  /** Ends the server and transport of this request: call it when the HTTP exchange is over (or broke off). */
  close(): Promise<void>;
}

/**
 * Answers one HTTP request of MCP's streamable HTTP transport, statelessly. `parsedBody` is the JSON body when the
 * caller's framework already read it. Only POST carries messages here; GET (a server-to-client stream) and DELETE
 * (ending a session) need sessions, which this mode has none of: answer them 405 before calling this.
 */
export async function answerHttpRequest(client: Sandboxd, request: Request, parsedBody: unknown, options: SandboxdMcpOptions = {}): Promise<HttpAnswer> {
  const server = createSandboxdMcpServer(client, options);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    })());
  try {
    const response = await transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
    return { response, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The JSON-RPC error body MCP clients expect for a method the endpoint does not serve (405). */
export function methodNotAllowedBody(method: string): { jsonrpc: '2.0'; error: { code: number; message: string }; id: null } {
  return {
    jsonrpc: '2.0',
    error: { code: -32000, message: `Method not allowed: ${method} /mcp. This endpoint is stateless: send JSON-RPC messages with POST` },
    id: null,
  };
}
