/** What a finished run (a command, Python code, a pre-stop hook) produced, before its record is written. */
import type { ExecResult } from '@sandboxd/agent/protocol';
import type { BoundedOutput } from './bounded-output.ts';
import type { PythonException, PythonRichResult } from '../model.ts';

export interface RunOutcome {
  status: 'completed' | 'failed' | 'timeout';
  exitCode: number | null;
  error: string | null;
  stdout: BoundedOutput;
  stderr: BoundedOutput;
  executionTime: number;
  cpuTime: number | null;
  results?: PythonRichResult[];
  exception?: PythonException | null;
}

/** Linux's numbers of the signals that end programs, for the shell's 128 + n exit code of a killed one. */
const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

/** What a command's result is as a record: its exit code (128 + the signal's number when killed), status and error. */
export function commandOutcome(result: ExecResult, stdout: BoundedOutput, stderr: BoundedOutput, timedOutError: string): RunOutcome {
  const exitCode = result.exitCode ?? 128 + (SIGNALS[result.signal ?? ''] ?? 0);
  return {
    status: result.timedOut ? 'timeout' : exitCode === 0 ? 'completed' : 'failed',
    exitCode,
    error: result.timedOut ? timedOutError : result.signal ? `killed by ${result.signal}` : null,
    stdout,
    stderr,
    executionTime: result.durationMs / 1000,
    cpuTime: result.cpu ? result.cpu.totalMs / 1000 : null,
  };
}
