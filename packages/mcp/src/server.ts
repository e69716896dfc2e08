/**
 * The MCP server of sandboxd: one set of tools and resources over the client library, whatever the transport.
 * `sandbox mcp` connects it to stdio with the command line's credentials; the API server's `/mcp` connects a new one
 * to each HTTP request with a client acting as that request's caller. Every tool call is an API call, so the API's
 * own authentication, authorization, quotas and rate limits apply unchanged.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { VERSION, type Sandboxd } from '@sandboxd/sdk';
import { toolContext, type SandboxdMcpOptions } from './context.ts';
import { registerFileResources } from './resources.ts';
import { registerBrowserTools } from './tools/browser.ts';
import { registerComputerTools } from './tools/computer.ts';
import { registerExecutionTools } from './tools/execution.ts';
import { registerFileTools } from './tools/files.ts';
import { registerProcessTools } from './tools/processes.ts';
import { registerSandboxTools } from './tools/sandboxes.ts';

/** What the server tells a model about itself when a host connects (MCP `instructions`). */
export const INSTRUCTIONS = `sandboxd runs isolated Linux microVMs ("sandboxes") for you.
Start with create_sandbox: it returns a session_id that the other tools take. run_python keeps Python state between calls, like a notebook; run_command runs bash.
read_file, write_file and list_files move files in and out; get_preview_url gives a URL for a server you start in the sandbox.
browser_* tools drive a headless browser of your own; computer_* tools drive a desktop sandbox (create_sandbox with template "desktop").
Errors come back as tool errors whose text starts with the API's error code (NOT_FOUND, QUOTA_EXCEEDED, RATE_LIMITED…).
Kill sandboxes you no longer need with kill_sandbox.`;

/** Builds an MCP server whose tools act through `client` (and so as its credentials' user). */
export function createSandboxdMcpServer(client: Sandboxd, options: SandboxdMcpOptions = {}): McpServer {
  const server = new McpServer(
    { name: options.name ?? 'sandboxd', title: 'sandboxd', version: options.version ?? VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  const ctx = toolContext(client, options);
  registerSandboxTools(server, ctx);
  registerExecutionTools(server, ctx);
  registerFileTools(server, ctx);
  registerProcessTools(server, ctx);
  registerBrowserTools(server, ctx);
  registerComputerTools(server, ctx);
  registerFileResources(server, ctx);
  return server;
}
