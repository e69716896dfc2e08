/**
 * How the end of a command or terminal reads in envd's `EndEvent`, which the SDK shows as it is: Go's
 * `ProcessState` wording (`exit status 3`, `signal: killed`), an exit code of -1 for a process a signal ended
 * (Go's `ExitCode()`), `exited` only for a normal exit, and `error` (Go's `exec.ExitError` text, the SDK's
 * `CommandExitError` message) whenever the process did not exit with 0.
 */
import { create } from '@bufbuild/protobuf';
import { ProcessEventSchema, type ProcessEvent } from './gen/process/process_pb.ts';

/** Go's names of the signals (`syscall.Signal.String()`), as envd's status shows them. */
const GO_SIGNAL_NAMES: Record<string, string> = {
  SIGHUP: 'hangup',
  SIGINT: 'interrupt',
  SIGQUIT: 'quit',
  SIGILL: 'illegal instruction',
  SIGTRAP: 'trace/breakpoint trap',
  SIGABRT: 'aborted',
  SIGBUS: 'bus error',
  SIGFPE: 'floating point exception',
  SIGKILL: 'killed',
  SIGUSR1: 'user defined signal 1',
  SIGSEGV: 'segmentation fault',
  SIGUSR2: 'user defined signal 2',
  SIGPIPE: 'broken pipe',
  SIGALRM: 'alarm clock',
  SIGTERM: 'terminated',
};

/** How a process ended, in sandboxd's words (a process record's or a terminal's). */
export interface ProcessEnding {
  exitCode: number | null;
  /** The name of the signal that ended it (`SIGKILL`), or null. */
  signal: string | null;
  /** Why it could not run to its end (the VM went away, the agent failed), or null. */
  failure: string | null;
}

/** The `end` event of a process that ended as `ending` says. */
export function endEventOf(ending: ProcessEnding): ProcessEvent {
  const signalled = ending.signal !== null;
  const exitCode = signalled ? -1 : (ending.exitCode ?? -1);
  const status = signalled
    ? `signal: ${GO_SIGNAL_NAMES[ending.signal!] ?? ending.signal!.replace(/^SIG/, '').toLowerCase()}`
    : ending.exitCode === null
      ? 'failed'
      : `exit status ${ending.exitCode}`;
  const error = ending.failure ?? (exitCode === 0 ? undefined : status);
  return create(ProcessEventSchema, {
    event: { case: 'end', value: { exitCode, exited: !signalled && ending.exitCode !== null, status, ...(error !== undefined ? { error } : {}) } },
  });
}
