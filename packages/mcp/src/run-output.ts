/** A run's answer (the execute answer, or an execution record polled later) as a tool result for a model. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunResult } from '@sandboxd/sdk';
import { capText, textResult } from './results.ts';

/**
 * The outcome as text: a first line with the exit code and status, then stdout and stderr, each cut to
 * `maxChars` (half each when both are long) with a note saying so. A failed run (an exception, a non-zero exit)
 * is a successful tool call that reports the failure: the model reads the traceback and fixes its code.
 */
export function runResult(outcome: RunResult, maxChars: number): CallToolResult {
  const budget = outcome.stdout && outcome.stderr ? Math.floor(maxChars / 2) : maxChars;
  const stdout = capText(outcome.stdout, budget);
  const stderr = capText(outcome.stderr, budget);
  const seconds = outcome.execution_time !== null ? `, ${outcome.execution_time.toFixed(2)} s` : '';
  const exit = outcome.exit_code === null ? 'no exit code' : `exit code ${outcome.exit_code}`;
  const lines: string[] = [`${statusWord(outcome.status)}: ${exit} (execution ${outcome.execution_id}${seconds})`];
  if (outcome.error) lines.push(`error: ${outcome.error}`);
  lines.push(outcome.stdout ? `stdout:\n${stdout.text}` : 'stdout: (empty)');
  if (outcome.stderr) lines.push(`stderr:\n${stderr.text}`);
  const notes: string[] = [];
  if (outcome.stdout_truncated) notes.push('stdout was longer than the sandbox keeps, so its end is missing');
  if (outcome.stderr_truncated) notes.push('stderr was longer than the sandbox keeps, so its end is missing');
  if (stdout.cut > 0 || stderr.cut > 0) {
    notes.push(
      `output was cut to ${maxChars} characters for this answer (${stdout.cut + stderr.cut} left out in the middle); write long output to a file and read parts of it (run_command with head, tail or grep)`,
    );
  }
  if (notes.length > 0) lines.push(`[truncated: ${notes.join('; ')}]`);
  const images = richContent(outcome, lines);
  const result = textResult(lines.join('\n'), {
    execution_id: outcome.execution_id,
    session_id: outcome.session_id,
    status: outcome.status,
    exit_code: outcome.exit_code,
    truncated: outcome.stdout_truncated || outcome.stderr_truncated || stdout.cut > 0 || stderr.cut > 0,
  });
  result.content.push(...images);
  return result;
}

/** Images a tool result carries at most (a model reads each; more are named in the text). */
const MAX_IMAGES = 4;
/** An image past this many base64 characters is named in the text instead of sent. */
const MAX_IMAGE_CHARS = 2_000_000;

/**
 * A Python run's rich results for a model: plots and other images as image content (the model sees the chart),
 * what `display()` showed and HTML tables named in the text (the last value is in stdout already).
 */
function richContent(outcome: RunResult, lines: string[]): CallToolResult['content'] {
  const images: CallToolResult['content'] = [];
  for (const [index, result] of (outcome.results ?? []).entries()) {
    const image =
      result.png !== undefined ? { data: result.png, mimeType: 'image/png' } : result.jpeg !== undefined ? { data: result.jpeg, mimeType: 'image/jpeg' } : null;
    if (image && images.length < MAX_IMAGES && image.data.length <= MAX_IMAGE_CHARS) {
      images.push({ type: 'image', ...image });
      lines.push(`result ${index + 1}: an image (${image.mimeType}), attached`);
    } else if (image)
      lines.push(`result ${index + 1}: an image (${image.mimeType}) not attached (too many or too large); save it to a file in the sandbox to read it`);
    else if (!result.is_main_result && result.text !== undefined) lines.push(`display: ${result.text}`);
  }
  return images;
}

function statusWord(status: string): string {
  switch (status) {
    case 'completed':
      return 'Completed';
    case 'failed':
      return 'Failed';
    case 'timeout':
      return 'Killed at its time limit';
    default:
      return status;
  }
}

/** The answer for a run still going when the wait ended: it goes on; get_execution fetches it. */
export function stillRunningResult(executionId: number, sessionId: string | undefined, waitedSeconds: number): CallToolResult {
  return textResult(
    `Still running after ${waitedSeconds} s (execution ${executionId}${sessionId ? ` in sandbox ${sessionId}` : ''}). It keeps running in the sandbox: ` +
      `call get_execution with execution_id ${executionId} to wait for its output.`,
    { execution_id: executionId, session_id: sessionId ?? null, status: 'running' },
  );
}
