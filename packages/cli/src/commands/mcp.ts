/**
 * sandbox mcp: sandboxd as a Model Context Protocol server on stdio, for local agent hosts (Claude Desktop, IDEs):
 * the host starts `sandbox mcp` and talks JSON-RPC over its stdin and stdout. The tools act with the same
 * credentials as every other command (--api-key, SANDBOXD_API_KEY, the stored login). stdout carries JSON-RPC
 * only; the one line this command writes goes to stderr.
 */
import { serveStdio } from '@sandboxd/mcp';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { CLI_VERSION } from '../version.ts';

export function registerMcp(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('mcp')
    .description('serve sandboxd to an AI agent host over stdio (Model Context Protocol): sandboxes, Python and shell runs, files, browsers, desktops')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      if (!ctx.client.hasCredentials) throw new UsageError(`no API key for ${ctx.baseUrl}: run \`sandbox login\`, set SANDBOXD_API_KEY, or pass --api-key`);
      const { closed } = await serveStdio(ctx.client, { version: CLI_VERSION });
      // stdout is the protocol's, so even --json's note goes to stderr (as one JSON line).
      if (ctx.out.json) process.stderr.write(`${JSON.stringify({ serving: ctx.baseUrl, transport: 'stdio', key_source: ctx.keySource })}\n`);
      else process.stderr.write(`sandbox mcp: serving ${ctx.baseUrl} over stdio (API key from ${ctx.keySource})\n`);
      await closed;
    });
}
