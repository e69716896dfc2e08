/**
 * sandbox exec / sandbox run: run code in a session and print its output as it is written (a streamed execute);
 * the exit code is the command's. A run longer than --timeout is not lost: the command line then polls the
 * execution record (once a second) until it completes. Ctrl-C cancels the run in the VM (the VM lives on).
 * `exec --stream` runs a bash command as a background process instead (commands/processes.ts); Ctrl-C sends it
 * SIGINT.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ExecutionError, recordAsResult, type Language, type RunResult } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { integer } from '../parse.ts';
import { streamCommand } from './processes.ts';

const LANGUAGES: Language[] = ['python', 'bash', 'node'];
const BY_EXTENSION: Record<string, Language> = { '.py': 'python', '.sh': 'bash', '.bash': 'bash', '.js': 'node', '.mjs': 'node', '.cjs': 'node' };

interface RunOptions {
  session?: string;
  language: Language;
  timeout: number;
  stream?: boolean;
  context?: string;
  resultsDir?: string;
}

/** A rich result's binary formats and the file extension each is saved with. */
const SAVED_FORMATS = [
  ['png', 'png'],
  ['jpeg', 'jpg'],
  ['svg', 'svg'],
  ['pdf', 'pdf'],
  ['html', 'html'],
] as const;

/**
 * Shows a Python run's rich results on a terminal: what `display()` showed as text goes to stdout (the last value
 * is in stdout already); images, HTML and PDFs are saved under `--results-dir`, or named on stderr.
 */
function showResults(ctx: Context, outcome: RunResult, resultsDir: string | undefined): void {
  outcome.results.forEach((result, index) => {
    const saved: string[] = [];
    for (const [format, extension] of SAVED_FORMATS) {
      const data = result[format];
      // HTML comes with a text form (in stdout already): only named when it is saved.
      if (data === undefined || (format === 'html' && !resultsDir)) continue;
      const bytes = format === 'svg' || format === 'html' ? Buffer.from(data, 'utf8') : Buffer.from(data, 'base64');
      if (resultsDir) {
        fs.mkdirSync(resultsDir, { recursive: true });
        const file = path.join(resultsDir, `execution-${outcome.execution_id}-${index + 1}.${extension}`);
        fs.writeFileSync(file, bytes);
        saved.push(file);
      } else saved.push(`${format} (${bytes.length} bytes)`);
    }
    if (!result.is_main_result && result.text !== undefined && saved.length === 0) process.stdout.write(`${result.text}\n`);
    if (saved.length > 0)
      ctx.out.info(resultsDir ? `result ${index + 1}: saved ${saved.join(', ')}` : `result ${index + 1}: ${saved.join(', ')} (--results-dir DIR saves it)`);
  });
}

/** The exit code of `sandbox exec`: the command's, else 124 for a run killed at its deadline (as timeout(1)), else 1 for a failure. */
function exitCodeOf(outcome: RunResult): number {
  if (outcome.exit_code !== null) return outcome.exit_code;
  if (outcome.status === 'timeout') return 124;
  return outcome.status === 'completed' ? 0 : 1;
}

async function runCode(ctx: Context, code: string, options: RunOptions): Promise<void> {
  const sessionId = ctx.sessionOr(options.session);
  const spinner = ctx.out.spinner(sessionId ? 'Running…' : 'Starting a new session…');
  // Output is printed as the code writes it (a streamed execute); what a record polled later has beyond that, after.
  const printed = { stdout: '', stderr: '' };
  let spinning = true;
  const live = (stream: 'stdout' | 'stderr') => (text: string) => {
    // Once: stopping clears the terminal's line, which may hold output without its newline yet.
    if (spinning) spinner.stop();
    spinning = false;
    printed[stream] += text;
    process[stream].write(text);
  };
  // Ctrl-C cancels the run in the VM (Python is interrupted and keeps its state; a command is killed; the VM
  // lives) and its end is printed as usual; a second Ctrl-C leaves at once.
  let executionId: number | undefined;
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts++;
    if (interrupts > 1 || executionId === undefined) process.exit(130);
    process.stderr.write('\n(cancelling the run in the VM; Ctrl-C again leaves without waiting)\n');
    void ctx.client.executions.cancel(executionId).catch(() => undefined);
  };
  process.on('SIGINT', onInterrupt);
  let outcome: RunResult;
  try {
    try {
      outcome = await ctx.client.execute(code, {
        sessionId,
        language: options.language,
        timeoutMs: options.timeout * 1000,
        ...(options.context ? { contextId: options.context } : {}),
        ...(ctx.out.json ? {} : { onStdout: live('stdout'), onStderr: live('stderr'), onStart: (run) => (executionId = run.executionId) }),
      });
    } catch (error) {
      if (!(error instanceof ExecutionError && error.executionId !== undefined && error.status === 408)) throw error;
      // Still running: it goes on in the VM; follow its record.
      spinner.update(`Still running (execution ${error.executionId})…`);
      outcome = recordAsResult(await ctx.client.executions.wait(error.executionId));
    }
  } finally {
    if (spinning) spinner.stop();
    process.off('SIGINT', onInterrupt);
  }
  if (!sessionId) {
    ctx.remember(outcome.session_id);
    if (!ctx.out.json) ctx.out.info(`(new session ${outcome.session_id}; later commands use it)`);
  }
  if (ctx.out.json) {
    ctx.out.result(outcome, () => '');
  } else {
    process.stdout.write(unprinted(outcome.stdout, printed.stdout));
    process.stderr.write(unprinted(outcome.stderr, printed.stderr));
    showResults(ctx, outcome, options.resultsDir);
  }
  process.exitCode = exitCodeOf(outcome);
}

/** What of `whole` was not printed yet (all of it when the printed part is not its start: the record was cut). */
function unprinted(whole: string, printed: string): string {
  return whole.startsWith(printed) ? whole.slice(printed.length) : printed === '' ? whole : '';
}

function languageOption(raw: string): Language {
  if (!(LANGUAGES as string[]).includes(raw)) throw new UsageError(`--language must be one of ${LANGUAGES.join(', ')}, got "${raw}"`);
  return raw as Language;
}

export function registerExec(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('exec')
    .description('run code in a session (python keeps its state between calls); "-" reads the code from stdin')
    .argument('<code...>', 'the code or command (several words are joined with spaces)')
    .option('-s, --session <id>', 'session to run in (default: the current one; none: a new session)')
    .option('-l, --language <language>', 'python, bash or node', languageOption, 'python' as Language)
    .option('-t, --timeout <seconds>', 'seconds to wait before following the run by polling (1 to 600)', integer('--timeout', 1, 600), 60)
    .option('--stream', 'run a bash command as a process and print its output as it arrives (Ctrl-C interrupts it in the VM)')
    .option('--context <id>', 'Python: run in this context of the session (`sandbox contexts create`)')
    .option('--results-dir <dir>', 'Python: save rich results (plots as PNG, tables as HTML) in this directory')
    .action(async (words: string[], options: RunOptions, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const code = words.length === 1 && words[0] === '-' ? fs.readFileSync(0, 'utf8') : words.join(' ');
      if (options.stream) {
        if (command.getOptionValueSource('language') === 'cli' && options.language !== 'bash') throw new UsageError('--stream runs bash commands');
        await streamCommand(ctx, code, options.session);
      } else await runCode(ctx, code, options);
    });

  program
    .command('run')
    .description('run a file in a session; the language comes from its extension (.py, .sh, .js)')
    .argument('<file>', 'local file to run')
    .option('-s, --session <id>', 'session to run in (default: the current one; none: a new session)')
    .option('--results-dir <dir>', 'Python: save rich results (plots as PNG, tables as HTML) in this directory')
    .option('-t, --timeout <seconds>', 'seconds to wait before following the run by polling (1 to 600)', integer('--timeout', 1, 600), 60)
    .action(async (file: string, options: Omit<RunOptions, 'language'>, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const language = BY_EXTENSION[path.extname(file).toLowerCase()];
      if (!language)
        throw new UsageError(`cannot tell the language of ${file} from its extension (.py, .sh, .bash, .js, .mjs, .cjs); use \`sandbox exec --language …\``);
      await runCode(ctx, fs.readFileSync(file, 'utf8'), { ...options, language });
    });
}
