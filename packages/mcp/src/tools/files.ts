/** Files in a sandbox: read_file, write_file, list_files. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ToolContext } from '../context.ts';
import { absoluteGuestPath, asText, imageTypeOf, listGuestPath, listingText } from '../guest-files.ts';
import { capText, guarded, textResult, ToolFailure } from '../results.ts';
import { guestPath, sessionId } from '../schemas.ts';

export function registerFileTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'read_file',
    {
      title: 'Read a file',
      description:
        'Reads a file from the sandbox. Text comes back as text (long files are cut in the middle, and the answer says so); PNG, JPEG, GIF and WebP images come back as images; ' +
        'other binary files as base64. To read part of a long file use run_command with head, tail, sed -n or grep.',
      inputSchema: {
        session_id: sessionId,
        path: guestPath,
        encoding: z
          .enum(['auto', 'text', 'base64'])
          .default('auto')
          .describe('auto (default): text, image or base64 by content; text: as UTF-8 text; base64: the bytes as base64'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const path = absoluteGuestPath(args.path);
        const bytes = await ctx.client.files.download(args.session_id, path);
        const image = args.encoding === 'auto' ? imageTypeOf(bytes) : null;
        if (image) {
          return {
            content: [
              { type: 'image', data: Buffer.from(bytes).toString('base64'), mimeType: image },
              { type: 'text', text: `${path}: ${image}, ${bytes.length} bytes` },
            ],
          };
        }
        const text = args.encoding === 'base64' ? null : args.encoding === 'text' ? new TextDecoder().decode(bytes) : asText(bytes);
        if (text !== null) {
          const shown = capText(text, ctx.maxOutputChars);
          const note =
            shown.cut > 0
              ? `\n[truncated: ${shown.cut} of ${text.length} characters left out in the middle; read parts with run_command (head, tail, sed -n 'A,Bp')]`
              : '';
          return textResult(`${path} (${bytes.length} bytes):\n${shown.text}${note}`, { path, size: bytes.length, encoding: 'text', truncated: shown.cut > 0 });
        }
        // Base64 of at most maxOutputChars characters: 3 bytes per 4 characters.
        const limit = Math.floor((ctx.maxOutputChars * 3) / 4);
        const base64 = Buffer.from(bytes.subarray(0, limit)).toString('base64');
        const note = bytes.length > limit ? `\n[truncated: only the first ${limit} of ${bytes.length} bytes are shown]` : '';
        return textResult(`${path} (${bytes.length} bytes, binary; base64):\n${base64}${note}`, {
          path,
          size: bytes.length,
          encoding: 'base64',
          truncated: bytes.length > limit,
        });
      }),
  );

  server.registerTool(
    'write_file',
    {
      title: 'Write a file',
      description:
        'Writes a file in the sandbox, replacing it if it exists and creating missing parent directories. Content is text (UTF-8) unless encoding is base64.',
      inputSchema: {
        session_id: sessionId,
        path: guestPath,
        content: z.string().max(50_000_000).describe('What to write: text, or base64 when encoding is "base64"'),
        encoding: z.enum(['utf8', 'base64']).default('utf8').describe('utf8 (default) or base64 (for binary files)'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const path = absoluteGuestPath(args.path);
        if (args.encoding === 'base64' && !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(args.content))
          throw new ToolFailure('INVALID_BASE64', 'content is not base64: use encoding "utf8" for text');
        const bytes = args.encoding === 'base64' ? Buffer.from(args.content, 'base64') : Buffer.from(args.content, 'utf8');
        const result = await ctx.client.files.upload(args.session_id, bytes, path);
        return textResult(`Wrote ${result.size ?? bytes.length} bytes to ${result.path ?? path}.`, {
          path: result.path ?? path,
          size: result.size ?? bytes.length,
        });
      }),
  );

  server.registerTool(
    'list_files',
    {
      title: 'List files',
      description:
        "Lists a directory of the sandbox (default /root): each entry's type, size in bytes, modification time and path, sorted by path. depth 2 or more also lists subdirectories.",
      inputSchema: {
        session_id: sessionId,
        path: guestPath.default(`/root`),
        depth: z.number().int().min(1).max(10).default(1).describe('How many levels down to list (default 1: the directory itself)'),
        limit: z.number().int().min(1).max(5000).default(500).describe('At most this many entries (default 500)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      guarded(async () => {
        const listing = await listGuestPath(ctx.client, args.session_id, args.path, { depth: args.depth, limit: args.limit, signal: extra.signal });
        return textResult(listingText(listing), { path: listing.path, is_file: listing.isFile, entries: listing.entries, truncated: listing.truncated });
      }),
  );
}
