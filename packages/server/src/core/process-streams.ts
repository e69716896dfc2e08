/**
 * A background process as `ProcessService` holds it, and its exec streams: the one that starts it, and each
 * re-attach after the link to its VM's agent went away. Every stream has its own stdin and signals (what was fed
 * to a stream that went away goes with it) and counts the bytes of each output stream it delivers, so the next one
 * asks the agent for the rest (`attachExec` from those offsets).
 */
import { PassThrough, type Readable } from 'node:stream';
import type { ExecResult } from '@sandboxd/agent/protocol';
import type { ProcessView } from './processes.ts';
import { ProcessOutput } from './process-output.ts';
import { ExecSignals, type ExecOutput, type KeptExecOffsets } from './vm-engine.ts';

/** How long a stream waits for the program to run (or for the agent to attach) before giving up. */
export const START_TIMEOUT_MS = 60_000;

export interface BackgroundProcess {
  view: ProcessView;
  userId: number;
  output: ProcessOutput;
  /** Input of the current stream (each stream has its own: a stream that went away takes its feed with it). */
  stdin: PassThrough | null;
  /** The caller closed stdin (a new stream gets none). */
  stdinClosed: boolean;
  signals: ExecSignals;
  /** Bytes of each output stream received so far (where a new stream's output starts). */
  received: KeptExecOffsets;
  /** `detached`: the stream went away with the link; the program may run on in the VM. */
  link: 'attached' | 'detached' | 'ended';
  /** A re-attach under way. */
  reattaching: Promise<void> | null;
  /** When an ended process is forgotten. */
  forgetAt: number;
}

/** How a stream began: the program runs (as `pid`; null when it ended before saying so), an error, or nothing in time. */
export type StreamStart = { pid: number | null } | { error: unknown } | { timeout: true };

/** A process record for `view`, owned by user `userId` (the newest `outputLimitBytes` kept), its stream not yet open. */
export function newProcess(view: ProcessView, userId: number, outputLimitBytes: number): BackgroundProcess {
  return {
    view,
    userId,
    output: new ProcessOutput(outputLimitBytes),
    stdin: null,
    stdinClosed: false,
    signals: new ExecSignals(),
    received: { stdoutOffset: 0, stderrOffset: 0 },
    link: 'attached',
    reattaching: null,
    forgetAt: Infinity,
  };
}

/**
 * Opens one stream of the process (`open`: its start, or a re-attach) with fresh stdin and signals, its output
 * counted and pushed to the process's output. Answers how it began and the stream's end (its result or error); a
 * stream that began makes the process `attached`.
 */
export async function openStream(
  process: BackgroundProcess,
  open: (output: ExecOutput, stdin: Readable | undefined, signals: ExecSignals) => Promise<ExecResult>,
): Promise<{ outcome: StreamStart; run: Promise<ExecResult> }> {
  const stdin = process.view.stdin && !process.stdinClosed ? new PassThrough() : null;
  const signals = new ExecSignals();
  const asked = { ...process.received };
  let started: (pid: number) => void = () => undefined;
  const running$ = new Promise<number>((resolve) => (started = resolve));
  const run = open(
    {
      onStdout: (chunk) => {
        process.received.stdoutOffset += chunk.length;
        process.output.push('stdout', chunk);
      },
      onStderr: (chunk) => {
        process.received.stderrOffset += chunk.length;
        process.output.push('stderr', chunk);
      },
      onStarted: (pid, from) => {
        // Where this stream's output starts: later than asked when the agent no longer had those bytes. Added, not
        // set: output counted before this call (the callbacks may come in either order) stays counted.
        if (from) {
          process.received.stdoutOffset += from.stdoutOffset - asked.stdoutOffset;
          process.received.stderrOffset += from.stderrOffset - asked.stderrOffset;
        }
        started(pid);
      },
    },
    stdin ?? undefined,
    signals,
  );
  const outcome = await Promise.race<StreamStart>([
    running$.then((pid) => ({ pid })),
    run.then(
      () => ({ pid: null }),
      (error: unknown) => ({ error }),
    ),
    new Promise<{ timeout: true }>((resolve) => setTimeout(() => resolve({ timeout: true }), START_TIMEOUT_MS).unref()),
  ]);
  process.stdin = stdin;
  process.signals = signals;
  if ('pid' in outcome) {
    if (outcome.pid !== null) process.view.pid ??= outcome.pid;
    process.link = 'attached';
  }
  return { outcome, run };
}
