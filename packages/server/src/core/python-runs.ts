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

/** Turns the agent's answer into an outcome; `outputLimitBytes` bounds each stream as for commands. */
export function pythonOutcome(result: PythonRunResult, outputLimitBytes: number, deadlineMs: number): PythonOutcome {
  const stdout = new BoundedOutput(outputLimitBytes);
  const stderr = new BoundedOutput(outputLimitBytes);
  stdout.pushText(result.stdout);
  // A notebook shows the value of the last expression; so does the output here.
  if (result.result !== null && result.result !== undefined)
    stdout.pushText(result.stdout === '' || result.stdout.endsWith('\n') ? `${result.result}\n` : `\n${result.result}\n`);
  stderr.pushText(result.stderr);
  if (result.error) stderr.pushText(result.error.traceback.endsWith('\n') ? result.error.traceback : `${result.error.traceback}\n`);
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
