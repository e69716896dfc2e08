/**
 * Background processes: start_process (a server, a watcher, a long build), process_output (what it printed since
 * the last look, waiting a while for more), list_processes, stop_process (a signal, or kill).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PROCESS_SIGNALS, type ProcessInfo } from '@sandboxd/sdk';
import { z } from 'zod';
import type { ToolContext } from '../context.ts';
import { capText, guarded, textResult } from '../results.ts';
import { sessionId } from '../schemas.ts';

/** How long process_output goes on reading once new output came, for what follows right behind it. */
const OUTPUT_SETTLE_MS = 500;
/** How often process_output looks for new output while it waits. */
const POLL_MS = 250;

const processId = z.string().min(1).max(64).describe('The process: the process_id start_process returned (list_processes lists them)');

/** One line about a process, for the model. */
function describe(p: ProcessInfo): string {
  const how =
    p.status === 'running'
      ? `running (pid ${p.pid})`
      : p.status === 'failed'
        ? `failed: ${p.error}`
        : p.timed_out
          ? 'ended: its timeout killed it'
          : p.exit_code !== null
            ? `exited with code ${p.exit_code}`
            : `ended by ${p.signal}`;
  return `${p.process_id} ${how}${p.tag ? ` [${p.tag}]` : ''}: ${p.command ?? (p.argv ?? []).join(' ')}`;
}

export function registerProcessTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'start_process',
    {
      title: 'Start a background process',
      description:
        'Starts a bash command line in the sandbox in the background (a web server, a watcher, a long build) and returns its process_id at once, while it runs. ' +
        'Read what it prints with process_output; stop it with stop_process. Use run_command for commands that finish quickly.',
      inputSchema: {
        session_id: sessionId,
        command: z.string().min(1).max(65_536).describe('The bash command line, e.g. "python3 -m http.server 8000"'),
        cwd: z.string().min(1).max(4096).optional().describe('Working directory (absolute; default /root)'),
        tag: z.string().min(1).max(128).optional().describe('A label to recognise it in list_processes'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args) =>
      guarded(async () => {
        const started = await ctx.client.processes.start(args.session_id, args.command, {
          ...(args.cwd ? { cwd: args.cwd } : {}),
          ...(args.tag ? { tag: args.tag } : {}),
        });
        return textResult(`Started ${describe(started)}\nRead its output with process_output (process_id ${started.process_id}).`, {
          process_id: started.process_id,
          pid: started.pid,
        });
      }),
  );

  server.registerTool(
    'process_output',
    {
      title: "A process's output",
      description:
        'Returns what a background process printed after output event `after` (0: from the start; each answer gives the number to pass next time), ' +
        'waiting up to wait_seconds for some while it runs (it answers soon after output comes), and how it ended once it has.',
      inputSchema: {
        session_id: sessionId,
        process_id: processId,
        after: z.number().int().min(0).default(0).describe('Only output after this event number (the "next after" of the previous answer)'),
        wait_seconds: z.number().int().min(0).max(120).default(5).describe('Seconds to wait for output or its end while it runs (0: just look)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      guarded(async () => {
        let text = '';
        let next = args.after;
        let dropped = 0;
        // Polled, never followed: the HTTP endpoint answers through the app in process (inject), which hands a
        // body over only once it is complete, so a followed stream would never arrive and never end. Stops at the
        // wait's end, when the process ended, or a moment after new output came (to take what follows right behind).
        const deadline = Date.now() + args.wait_seconds * 1000;
        let firstOutputAt: number | undefined;
        for (;;) {
          let ended = false;
          for await (const event of ctx.client.processes.output(args.session_id, args.process_id, { after: next, follow: false, signal: extra.signal })) {
            if ((event.type === 'stdout' || event.type === 'stderr') && event.data !== undefined) {
              text += event.data;
              next = event.seq ?? next;
              firstOutputAt ??= Date.now();
            } else if (event.type === 'dropped') dropped += event.events ?? 0;
            else if (event.type === 'exit') ended = true;
          }
          const now = Date.now();
          if (ended || now >= deadline || (firstOutputAt !== undefined && now - firstOutputAt >= OUTPUT_SETTLE_MS)) break;
          await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, deadline - now)));
        }
        const process = await ctx.client.processes.get(args.session_id, args.process_id);
        const shown = capText(text, ctx.maxOutputChars);
        const notes = [
          ...(dropped > 0 ? [`[${dropped} older output events are no longer kept]`] : []),
          ...(shown.cut > 0 ? [`[truncated: ${shown.cut} characters left out in the middle]`] : []),
        ];
        return textResult(
          `${describe(process)}\nnext after: ${next}\n${text === '' ? '(no new output)' : `output:\n${shown.text}`}${notes.length ? `\n${notes.join('\n')}` : ''}`,
          { status: process.status, exit_code: process.exit_code, next_after: next },
        );
      }),
  );

  server.registerTool(
    'list_processes',
    {
      title: 'List background processes',
      description: "Lists the sandbox's background processes: the running ones, and those that ended in the last 10 minutes.",
      inputSchema: { session_id: sessionId },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const list = await ctx.client.processes.list(args.session_id);
        return textResult(list.length === 0 ? 'No background processes.' : list.map(describe).join('\n'), { processes: list.map((p) => p.process_id) });
      }),
  );

  server.registerTool(
    'stop_process',
    {
      title: 'Stop a background process',
      description: 'Stops a background process: kills it (default), or sends it a signal (SIGINT, SIGTERM, …) to let it stop by itself. The sandbox goes on.',
      inputSchema: {
        session_id: sessionId,
        process_id: processId,
        signal: z
          .enum(PROCESS_SIGNALS)
          .default('SIGKILL')
          .describe('SIGKILL (default) kills it and waits for its end; another signal is sent and the answer comes at once'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const process =
          args.signal === 'SIGKILL'
            ? await ctx.client.processes.kill(args.session_id, args.process_id)
            : await ctx.client.processes.signal(args.session_id, args.process_id, args.signal);
        return textResult(args.signal === 'SIGKILL' ? describe(process) : `Sent ${args.signal}: ${describe(process)}`, { status: process.status });
      }),
  );
}
