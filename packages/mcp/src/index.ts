/**
 * @sandboxd/mcp: sandboxd as a Model Context Protocol server.
 *
 *   await serveStdio(new Sandboxd({ apiKey, baseUrl }));               // sandbox mcp
 *   const { response, close } = await answerHttpRequest(client, request, body);  // the API server's /mcp
 *   const server = createSandboxdMcpServer(client);                    // any other transport
 */
export { createSandboxdMcpServer, INSTRUCTIONS } from './server.ts';
export { DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_PROGRESS_INTERVAL_MS, DEFAULT_READY_TIMEOUT_SECONDS, type SandboxdMcpOptions } from './context.ts';
export { FILE_URI_TEMPLATE, fileUri } from './resources.ts';
export { answerHttpRequest, methodNotAllowedBody, serveStdio, type HttpAnswer } from './transports.ts';
/** The names of the tools, for hosts and tests that check what is offered. */
export const TOOL_NAMES = [
  'create_sandbox',
  'list_sandboxes',
  'kill_sandbox',
  'get_preview_url',
  'run_python',
  'run_command',
  'get_execution',
  'read_file',
  'write_file',
  'list_files',
  'start_process',
  'process_output',
  'list_processes',
  'stop_process',
  'browser_open',
  'browser_navigate',
  'browser_click',
  'browser_type',
  'browser_press_key',
  'browser_content',
  'browser_extract',
  'browser_screenshot',
  'browser_close',
  'computer_screenshot',
  'computer_action',
] as const;
