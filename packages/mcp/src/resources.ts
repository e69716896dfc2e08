/**
 * A sandbox's files as MCP resources: `sandbox://{session_id}/files/{path}`, where path is the absolute path
 * without its first slash (`sandbox://3f…/files/root/report.csv` is /root/report.csv). A path ending in "/"
 * is a directory, read as a listing. resources/list offers the home directory of each running sandbox (it
 * runs nothing: listing a directory happens when it is read).
 */
import { McpError, ErrorCode, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SandboxdError } from '@sandboxd/sdk';
import type { ToolContext } from './context.ts';
import { asText, HOME, imageTypeOf, listGuestPath, listingText, textMimeTypeOf } from './guest-files.ts';
import { ToolFailure } from './results.ts';

export const FILE_URI_TEMPLATE = 'sandbox://{session_id}/files/{+path}';

/** The URI of a path in a sandbox (a trailing "/" for a directory). */
export function fileUri(sessionId: string, path: string, directory = false): string {
  const relative = path.replace(/^\/+/, '').replace(/\/+$/, '');
  const encoded = relative.split('/').map(encodeURIComponent).join('/');
  return `sandbox://${encodeURIComponent(sessionId)}/files/${encoded}${directory && relative !== '' ? '/' : ''}`;
}

const one = (value: string | string[] | undefined): string => (Array.isArray(value) ? value.join('/') : (value ?? ''));

/** A failure as a JSON-RPC error whose message carries the API's code (resources have no `isError` results). */
function resourceError(error: unknown): McpError {
  if (error instanceof McpError) return error;
  if (error instanceof SandboxdError) {
    const code = error.code ?? error.name;
    return new McpError(
      error.status === 404 || error.status === 403 ? ErrorCode.InvalidParams : ErrorCode.InternalError,
      `${code}${error.status ? ` (HTTP ${error.status})` : ''}: ${error.message}`,
      {
        code,
        status: error.status ?? null,
      },
    );
  }
  if (error instanceof ToolFailure) return new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`, { code: error.code });
  return new McpError(ErrorCode.InternalError, error instanceof Error ? error.message : String(error));
}

export function registerFileResources(server: McpServer, ctx: ToolContext): void {
  const template = new ResourceTemplate(FILE_URI_TEMPLATE, {
    list: async () => {
      try {
        const sandboxes = await ctx.client.sandboxes.list({ limit: 100 });
        const running = sandboxes.filter((s) => s.status === 'active' && s.session_id);
        return {
          resources: running.map((s) => ({
            uri: fileUri(s.session_id!, HOME, true),
            name: `${HOME}/ of sandbox ${s.session_id}`,
            description: `The home directory of sandbox ${s.session_id} (${s.name}); read it for a listing, or read ${fileUri(s.session_id!, `${HOME}/NAME`)} for a file`,
            mimeType: 'text/plain',
          })),
        };
      } catch (error) {
        throw resourceError(error);
      }
    },
  });

  server.registerResource(
    'sandbox-files',
    template,
    {
      title: 'Files of a sandbox',
      description:
        'A file (or, with a trailing "/", a directory listing) in one of your sandboxes: sandbox://{session_id}/files/{absolute path without the first "/"}',
    },
    async (uri, variables, extra): Promise<ReadResourceResult> => {
      try {
        const sessionId = decodeURIComponent(one(variables.session_id));
        const raw = one(variables.path);
        const path = `/${raw
          .split('/')
          .map((part) => decodeURIComponent(part))
          .join('/')}`;
        if (raw === '' || raw.endsWith('/')) {
          const listing = await listGuestPath(ctx.client, sessionId, path, { depth: 1, limit: 1000, signal: extra.signal });
          return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: listingText(listing) }] };
        }
        const bytes = await ctx.client.files.download(sessionId, path, { signal: extra.signal });
        const text = imageTypeOf(bytes) ? null : asText(bytes);
        if (text !== null) return { contents: [{ uri: uri.href, mimeType: textMimeTypeOf(path), text }] };
        return { contents: [{ uri: uri.href, mimeType: imageTypeOf(bytes) ?? 'application/octet-stream', blob: Buffer.from(bytes).toString('base64') }] };
      } catch (error) {
        throw resourceError(error);
      }
    },
  );
}
