/** Sandboxes themselves: create_sandbox, list_sandboxes, kill_sandbox, get_preview_url. */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { SessionStatus } from '@sandboxd/sdk';
import { z } from 'zod';
import type { ToolContext } from '../context.ts';
import { startProgress, type ToolExtra } from '../progress.ts';
import { guarded, textResult } from '../results.ts';
import { sessionId } from '../schemas.ts';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Polls the session's status until its VM is up, `seconds` at most; the last status seen. */
async function waitUntilReady(ctx: ToolContext, id: string, seconds: number, extra: ToolExtra): Promise<SessionStatus> {
  const deadline = Date.now() + seconds * 1000;
  const progress = startProgress(extra, 'starting the sandbox VM', ctx.progressIntervalMs, seconds);
  try {
    for (;;) {
      const status = await ctx.client.sessions.status(id);
      if (status.vm_alive || Date.now() >= deadline || extra.signal.aborted) return status;
      await sleep(500, extra.signal);
    }
  } finally {
    progress.stop();
  }
}

export function registerSandboxTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'create_sandbox',
    {
      title: 'Create a sandbox',
      description:
        'Creates a new sandbox: an isolated Linux microVM (Debian, Python 3, bash) of your own, and starts it. Returns its session_id, which every other tool takes. ' +
        'Python state (variables, imports) persists across run_python calls in the same sandbox. The sandbox is killed automatically after lifetime_seconds. ' +
        'Use template "desktop" for a graphical desktop driven with the computer_* tools; other names start from your own templates or snapshots.',
      inputSchema: {
        template: z
          .string()
          .min(1)
          .max(128)
          .optional()
          .describe('What to start from: omit for the standard image; "desktop" for computer use; or the name of one of your templates or snapshots'),
        vcpus: z
          .union([z.literal(1), z.literal(2), z.literal(4), z.literal(6), z.literal(8)])
          .optional()
          .describe('Virtual CPUs: 1, 2, 4, 6 or 8 (default 2)'),
        memory_mb: z.number().int().min(128).max(8192).optional().describe("Memory in MiB, 128 to 8192 (default: the server's, usually 512)"),
        lifetime_seconds: z.number().int().min(20).max(2_592_000).optional().describe('Seconds until the sandbox is killed, 20 to 2592000 (default 300)'),
        metadata: z.record(z.string(), z.string()).optional().describe('Your own key/value labels; list_sandboxes can filter on them'),
        env: z.record(z.string(), z.string()).optional().describe('Environment variables of every run in the sandbox'),
        wait_until_ready: z
          .boolean()
          .default(true)
          .describe('Wait until the VM is up before answering (default true); false answers at once and the first run waits instead'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) =>
      guarded(async () => {
        const session = await ctx.client.sessions.create({
          ...(args.template !== undefined ? { template: args.template } : {}),
          ...(args.vcpus !== undefined ? { vcpuCount: args.vcpus } : {}),
          ...(args.memory_mb !== undefined ? { memoryMb: args.memory_mb } : {}),
          ...(args.lifetime_seconds !== undefined ? { vmLifetimeMs: args.lifetime_seconds * 1000 } : {}),
          ...(args.metadata ? { metadata: args.metadata } : {}),
          ...(args.env ? { env: args.env } : {}),
          prewarm: true,
        });
        const created = session.created!;
        const status = args.wait_until_ready ? await waitUntilReady(ctx, session.id, ctx.readyTimeoutSeconds, extra) : null;
        const state =
          status === null ? created.status : status.vm_alive ? 'running' : `not running yet (${status.vm_status ?? 'starting'}); the first run starts it`;
        const lines = [
          `Created sandbox ${session.id}.`,
          `session_id: ${session.id}`,
          `state: ${state}`,
          `source: ${created.source.kind} ${created.source.name}`,
          `vcpus: ${created.vcpu_count}, memory: ${created.memory_mb} MiB, lifetime: ${created.vm_lifetime_seconds} s`,
        ];
        return textResult(lines.join('\n'), {
          session_id: session.id,
          vm_running: status?.vm_alive ?? created.status === 'active',
          source: created.source,
          vcpu_count: created.vcpu_count,
          memory_mb: created.memory_mb,
          vm_lifetime_seconds: created.vm_lifetime_seconds,
          metadata: created.metadata,
        });
      }),
  );

  server.registerTool(
    'list_sandboxes',
    {
      title: 'List sandboxes',
      description:
        'Lists your sandboxes (one line per VM, newest first) with their session_id, status, template, size and expiry. Killed sandboxes are listed too, as killed.',
      inputSchema: {
        metadata: z.record(z.string(), z.string()).optional().describe('Only sandboxes whose metadata contains all these key/value pairs'),
        include_killed: z.boolean().default(false).describe('Also list killed sandboxes (default false: only live ones)'),
        limit: z.number().int().min(1).max(1000).default(50).describe('At most this many (default 50)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const all = await ctx.client.sandboxes.list({ ...(args.metadata ? { metadata: args.metadata } : {}), limit: args.limit });
        const shown = args.include_killed ? all : all.filter((s) => s.status !== 'killed');
        if (shown.length === 0)
          return textResult(
            all.length === 0 ? 'You have no sandboxes. create_sandbox makes one.' : 'No live sandboxes (include_killed: true lists the killed ones).',
            { sandboxes: [] },
          );
        const lines = shown.map(
          (s) =>
            `${s.session_id ?? '(no session)'}  ${s.status}  template=${s.name}  vcpus=${s.vcpu_count} memory=${s.memory_mb}MiB  started=${s.started_at}${s.end_at ? `  ends=${s.end_at}` : ''}${Object.keys(s.metadata).length > 0 ? `  metadata=${JSON.stringify(s.metadata)}` : ''}`,
        );
        return textResult(`${shown.length} sandbox${shown.length === 1 ? '' : 'es'} (session_id, status, details):\n${lines.join('\n')}`, {
          sandboxes: shown.map((s) => ({
            session_id: s.session_id,
            sandbox_id: s.sandbox_id,
            status: s.status,
            template: s.name,
            vcpu_count: s.vcpu_count,
            memory_mb: s.memory_mb,
            started_at: s.started_at,
            end_at: s.end_at,
            metadata: s.metadata,
          })),
        });
      }),
  );

  server.registerTool(
    'kill_sandbox',
    {
      title: 'Kill a sandbox',
      description: "Kills the sandbox's VM at once: its processes, files and Python state are gone. The session_id stays valid: a later run starts a fresh VM.",
      inputSchema: { session_id: sessionId },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const result = await ctx.client.sessions.kill(args.session_id);
        return textResult(`Killed the VM of sandbox ${args.session_id}. ${result.message ?? ''}`.trim(), { session_id: args.session_id, killed: true });
      }),
  );

  server.registerTool(
    'get_preview_url',
    {
      title: 'Preview URL of a port',
      description:
        'Returns a URL that reaches a TCP port of a server running inside the sandbox (for example a web app you started with run_command on port 8000). ' +
        'Start the server first, listening on 0.0.0.0; the URL works for as long as the sandbox runs.',
      inputSchema: {
        session_id: sessionId,
        port: z.number().int().min(1).max(65535).describe('The port the server listens on inside the sandbox'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const app = await ctx.client.sessions.appUrl(args.session_id, args.port);
        return textResult(`Port ${args.port} of sandbox ${args.session_id}: ${app.url}\n(the sandbox ends in ${Math.round(app.expires_in_seconds)} s)`, {
          url: app.url,
          port: app.port,
          expires_in_seconds: app.expires_in_seconds,
        });
      }),
  );
}
