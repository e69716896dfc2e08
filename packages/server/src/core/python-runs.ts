/**
 * What a Python run in a session's interpreter comes to: its output, its rich results (a notebook's display data:
 * `display()` calls, matplotlib figures, the last value's HTML or image) and its exception as a structure.
 */
import type { PythonRunResult } from '@sandboxd/agent/protocol';
import { BoundedOutput } from './bounded-output.ts';
import type { PythonContext, PythonException, PythonRichResult } from '../model.ts';

/** All of one run's rich results kept, in bytes of JSON; the ones past it are replaced by a note. */
export const RESULTS_LIMIT_BYTES = 8 * 1024 * 1024;

/** The formats a result may carry (what the agent's kernel makes); anything else it sends is dropped. */
const FORMATS = ['text', 'html', 'markdown', 'svg', 'png', 'jpeg', 'pdf', 'latex', 'json', 'javascript'] as const;

/**
 * The interpreter of a context in the agent: the session's own (`base`: the session id, or for a clone its
 * snapshot's), or an extra context of it, named after both so no two sessions' contexts can meet.
 */
export function agentContextId(base: string, context: PythonContext | null): string {
  return context ? `${base}.${context.id}` : base;
}

/** What a finished Python run produced, before it is written. */
export interface PythonOutcome {
  status: 'completed' | 'failed' | 'timeout';
  exitCode: number;
  error: string | null;
  stdout: BoundedOutput;
  stderr: BoundedOutput;
  executionTime: number;
  cpuTime: number | null;
  results: PythonRichResult[];
  exception: PythonException | null;
}

/**
 * What the record's output has beyond what the code wrote: the value of the last expression on stdout (a notebook
 * shows it; so does the output here) and the traceback on stderr. A streamed run sends these at its end, so that its
 * stream adds up to the record.
 */
export function pythonOutputTails(result: PythonRunResult): { stdout: string; stderr: string } {
  const value =
    result.result === null || result.result === undefined
      ? ''
      : result.stdout === '' || result.stdout.endsWith('\n')
        ? `${result.result}\n`
        : `\n${result.result}\n`;
  const traceback = !result.error ? '' : result.error.traceback.endsWith('\n') ? result.error.traceback : `${result.error.traceback}\n`;
  return { stdout: value, stderr: traceback };
}

/**
 * A streamed run's output callbacks for the agent, and `end`, which sends the record's tails once the run ended
 * (unless `withTails` is false: a reader that gets the results and the exception as structures wants no echo).
 */
export function pythonStream(onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) => void, withTails = true) {
  return {
    output: { onStdout: (chunk: Buffer) => onOutput('stdout', chunk), onStderr: (chunk: Buffer) => onOutput('stderr', chunk) },
    end(result: PythonRunResult): void {
      if (!withTails) return;
      const tails = pythonOutputTails(result);
      if (tails.stdout) onOutput('stdout', Buffer.from(tails.stdout));
      if (tails.stderr) onOutput('stderr', Buffer.from(tails.stderr));
    },
  };
}

/** Turns the agent's answer into an outcome; `outputLimitBytes` bounds each stream as for commands. */
export function pythonOutcome(result: PythonRunResult, outputLimitBytes: number, deadlineMs: number): PythonOutcome {
  const stdout = new BoundedOutput(outputLimitBytes);
  const stderr = new BoundedOutput(outputLimitBytes);
  const tails = pythonOutputTails(result);
  stdout.pushText(result.stdout);
  if (tails.stdout) stdout.pushText(tails.stdout);
  stderr.pushText(result.stderr);
  if (tails.stderr) stderr.pushText(tails.stderr);
  const status = result.timedOut ? 'timeout' : result.error ? 'failed' : 'completed';
  return {
    status,
    exitCode: result.error || result.timedOut ? 1 : 0,
    error: result.timedOut ? `interrupted after ${Math.round(deadlineMs / 1000)} s` : result.error ? `${result.error.name}: ${result.error.value}` : null,
    stdout,
    stderr,
    executionTime: result.durationMs / 1000,
    cpuTime: result.cpuMs === null ? null : result.cpuMs / 1000,
    results: boundedResults(result.results ?? []),
    exception: result.error ? { name: result.error.name, value: result.error.value, traceback: result.error.traceback } : null,
  };
}

/**
 * The results as kept: only the known formats, and at most {@link RESULTS_LIMIT_BYTES} in all (the guest chooses
 * what it sends: a result past the limit becomes a text note saying how big it was).
 */
export function boundedResults(results: readonly PythonRichResult[]): PythonRichResult[] {
  const kept: PythonRichResult[] = [];
  let total = 0;
  for (const result of results) {
    if (typeof result !== 'object' || result === null) continue;
    const clean: PythonRichResult = { isMainResult: result.isMainResult === true };
    for (const format of FORMATS) {
      const value = result[format];
      if (value === undefined || value === null) continue;
      if (format === 'json') clean.json = value;
      else if (typeof value === 'string') clean[format] = value;
    }
    const size = Buffer.byteLength(JSON.stringify(clean));
    if (total + size > RESULTS_LIMIT_BYTES) {
      const note = `[a result of ${size} bytes was left out: a run keeps at most ${RESULTS_LIMIT_BYTES} bytes of results]`;
      kept.push({ text: note, isMainResult: clean.isMainResult });
      total += note.length;
      continue;
    }
    total += size;
    kept.push(clean);
  }
  return kept;
}
