/**
 * A finished execution record as the code interpreter's closing lines: its rich results (`result`), then what
 * ended it badly (`error`), in the shapes `@e2b/code-interpreter`'s `parseOutput` reads. Output lines (`stdout`,
 * `stderr`) are streamed as they happen, before these.
 */
import type { Execution, PythonRichResult } from '../../../model.ts';

export type OutputLine = Record<string, unknown> & { type: string };

/** E2B's server shows a string value's text without the quotes of its repr (`'a'` reads `a`). */
function e2bText(text: string | undefined): string | undefined {
  if (text && text.length >= 2 && text.startsWith("'") && text.endsWith("'")) return text.slice(1, -1);
  return text;
}

/** One rich result as a `result` line: each format under E2B's key, `is_main_result` for the last value. */
export function resultLine(result: PythonRichResult): OutputLine {
  const { isMainResult, text, ...formats } = result;
  const line: OutputLine = { type: 'result', is_main_result: isMainResult };
  const shown = e2bText(text);
  if (shown !== undefined) line.text = shown;
  for (const [format, value] of Object.entries(formats)) if (value !== undefined && value !== null) line[format] = value;
  return line;
}

/** The `name: value` line of a command's output that names a JavaScript error (`ReferenceError: x is not defined`). */
const JS_ERROR = /^(\w*Error|\w*Exception): (.*)$/m;

/**
 * Why a run did not end well, as an `error` line, or null when it did: a Python exception as raised; a node
 * run's uncaught error as its stderr names it; a bash run's exit status (as Jupyter's bash kernel reports one,
 * with no name); a run stopped before its end (interrupted at its deadline, cancelled, its VM gone) with sandboxd's
 * reason.
 */
export function errorLine(execution: Execution): OutputLine | null {
  if (execution.exception) return { type: 'error', ...execution.exception };
  if (execution.status === 'completed') return null;
  if (execution.language !== 'python' && execution.exitCode !== null && !execution.error) {
    const named = execution.language === 'node' ? JS_ERROR.exec(execution.stderr) : null;
    if (named) return { type: 'error', name: named[1], value: named[2], traceback: execution.stderr };
    return { type: 'error', name: '', value: String(execution.exitCode), traceback: '' };
  }
  return { type: 'error', name: 'ExecutionError', value: execution.error ?? `the run ended ${execution.status}`, traceback: '' };
}

/** All closing lines of a record, in E2B's order: results, then the error if any. */
export function closingLines(execution: Execution): OutputLine[] {
  const lines = execution.results.map(resultLine);
  const error = errorLine(execution);
  if (error) lines.push(error);
  return lines;
}
