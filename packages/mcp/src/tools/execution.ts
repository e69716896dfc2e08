/** Running code: run_python (stateful), run_command (bash), get_execution (a run that outlived its wait). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ExecutionError, recordAsResult, type Language } from '@sandboxd/sdk';
import { z } from 'zod';
import type { ToolContext } from '../context.ts';
import { withProgress, type ToolExtra } from '../progress.ts';
import { guarded } from '../results.ts';
import { runResult, stillRunningResult } from '../run-output.ts';
import { sessionId, timeoutSeconds } from '../schemas.ts';

/** Runs and formats; a run longer than the wait (408 EXECUTION_TIMEOUT) is reported as still running, not as an error. */
async function run(ctx: ToolContext, extra: ToolExtra, session: string, source: string, language: Language, timeout: number) {
  try {
    const label = language === 'python' ? 'running Python' : 'running the command';
    const result = await withProgress(
      extra,
      label,
      ctx.progressIntervalMs,
      () => ctx.client.execute(source, { sessionId: session, language, timeoutMs: timeout * 1000, signal: extra.signal }),
      timeout,
    );
    return runResult(result, ctx.maxOutputChars);
  } catch (error) {
    if (error instanceof ExecutionError && error.status === 408 && error.executionId !== undefined)
      return stillRunningResult(error.executionId, error.sessionId ?? session, timeout);
    throw error;
  }
}

export function registerExecutionTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'run_python',
    {
      title: 'Run Python',
      description:
        "Runs Python 3 code in the sandbox's persistent interpreter, like a notebook cell: variables, imports and functions defined in one call are there in the next. " +
        "Returns what it printed (stdout, stderr with any traceback), the last expression's value (as a notebook shows it) and the exit code; " +
        'matplotlib figures the code leaves open come back as images (no plt.show() needed; numpy, pandas and matplotlib are installed). ' +
        'Use run_command for shell commands (pip install, ls, git).',
      inputSchema: {
        session_id: sessionId,
        code: z.string().min(1).max(1_000_000).describe('Python source to run'),
        timeout_seconds: timeoutSeconds,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) => guarded(() => run(ctx, extra, args.session_id, args.code, 'python', args.timeout_seconds)),
  );

  server.registerTool(
    'run_command',
    {
      title: 'Run a shell command',
      description:
        'Runs a bash command line in the sandbox (a fresh bash process each call, working directory /root; files persist, shell variables do not). ' +
        'Returns stdout, stderr and the exit code; a non-zero exit code is reported, not raised. Pipes, && and redirections work. ' +
        'Long output is cut for the answer: redirect it to a file and look at parts of it.',
      inputSchema: {
        session_id: sessionId,
        command: z.string().min(1).max(1_000_000).describe('The bash command line, e.g. "pip install requests && python -c \'import requests\'"'),
        timeout_seconds: timeoutSeconds,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) => guarded(() => run(ctx, extra, args.session_id, args.command, 'bash', args.timeout_seconds)),
  );

  server.registerTool(
    'get_execution',
    {
      title: 'Result of an earlier run',
      description:
        'Waits for a run that was still going when run_python or run_command answered ("Still running … execution N"), and returns its output and exit code.',
      inputSchema: {
        execution_id: z.number().int().min(1).max(2_147_483_647).describe('The execution number from the "Still running" answer'),
        wait_seconds: z.number().int().min(0).max(600).default(30).describe('Seconds to wait for it to finish (0: just look; default 30)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      guarded(async () => {
        const deadline = Date.now() + args.wait_seconds * 1000;
        const record = await withProgress(
          extra,
          `waiting for execution ${args.execution_id}`,
          ctx.progressIntervalMs,
          async () => {
            for (;;) {
              const current = await ctx.client.executions.get(args.execution_id, { signal: extra.signal });
              if (current.is_complete || Date.now() + 1000 > deadline || extra.signal.aborted) return current;
              await new Promise((resolve) => setTimeout(resolve, 1000));
            }
          },
          args.wait_seconds,
        );
        if (!record.is_complete) return stillRunningResult(record.id, record.session_id, args.wait_seconds);
        return runResult(recordAsResult(record), ctx.maxOutputChars);
      }),
  );
}
