/** Schemas of background processes (core/processes.ts). */
import { Type, type Static } from 'typebox';
import { SENDABLE_SIGNALS } from '../../../core/vm-engine.ts';
import { StringEnum } from '../../schemas/common.ts';
import { GuestPath } from '../../schemas/guest-path.ts';

export const ProcessParams = Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const OneProcessParams = Type.Object({
  session_id: Type.String({ minLength: 1, maxLength: 64 }),
  process_id: Type.String({ minLength: 1, maxLength: 64 }),
});

export const ProcessStartRequest = Type.Object(
  {
    command: Type.Optional(
      Type.String({ minLength: 1, maxLength: 65_536, description: 'A command line, run by `/bin/bash -c`. Exactly one of command and argv' }),
    ),
    argv: Type.Optional(
      Type.Array(Type.String({ maxLength: 65_536 }), { minItems: 1, maxItems: 4096, description: 'A program and its arguments, run directly (no shell)' }),
    ),
    cwd: Type.Optional(GuestPath("Working directory (default: the user's home, /root for root); it must exist")),
    user: Type.Optional(
      Type.String({
        pattern: '^[a-z_][a-z0-9_-]{0,30}\\$?$',
        description:
          'The account of the VM that runs it: `root` (the default, as executions run) or `user` (uid 1000, home /home/user, no sudo), or one a template added. An unknown name is 400',
      }),
    ),
    env: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' }), Type.String({ maxLength: 65_536 }), {
        maxProperties: 256,
        description: "Environment on top of the session's env",
      }),
    ),
    timeout_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86_400,
        description: "Killed (its whole process group) after this long; default: runs until the VM's end (at most 24 h)",
      }),
    ),
    stdin: Type.Optional(Type.Boolean({ default: false, description: 'Keep stdin open for POST …/stdin; otherwise the program reads /dev/null' })),
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'A label of yours, shown in lists' })),
  },
  { additionalProperties: false, $id: 'ProcessStartRequest' },
);
export type ProcessStartRequest = Static<typeof ProcessStartRequest>;

export const ProcessInfo = Type.Object(
  {
    process_id: Type.String(),
    session_id: Type.String(),
    vm_id: Type.String(),
    pid: Type.Union([Type.Integer(), Type.Null()], { description: "The program's process id in the VM (its process group's too)" }),
    tag: Type.Union([Type.String(), Type.Null()]),
    command: Type.Union([Type.String(), Type.Null()]),
    argv: Type.Union([Type.Array(Type.String()), Type.Null()]),
    cwd: Type.String(),
    user: Type.String({ description: 'The account it runs as' }),
    stdin: Type.Boolean({ description: 'Started with stdin open' }),
    status: StringEnum(['running', 'exited', 'failed'] as const, {
      description: '`exited`: it ended (exit_code, or the signal that ended it); `failed`: its VM or agent went away while it ran (error)',
    }),
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    signal: Type.Union([Type.String(), Type.Null()], { description: 'The signal that ended it (e.g. SIGKILL), or null' }),
    timed_out: Type.Boolean({ description: 'Its timeout_seconds ended it' }),
    error: Type.Union([Type.String(), Type.Null()]),
    started_at: Type.String({ format: 'date-time' }),
    ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    output_seq: Type.Integer({ minimum: 0, description: 'Number of its newest output event: pass it as `after` to read only what follows' }),
  },
  { $id: 'ProcessInfo' },
);

export const ProcessList = Type.Object({ processes: Type.Array(Type.Ref('ProcessInfo')) }, { $id: 'ProcessList' });

export const ProcessOutputQuery = Type.Object({
  after: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 2 ** 53 - 1,
      default: 0,
      description: 'Output events after this one (0: from the oldest kept). The Last-Event-ID header of an event stream wins',
    }),
  ),
  follow: Type.Optional(Type.Boolean({ default: true, description: 'Stream: keep the stream open for live output until the process ends' })),
  encoding: Type.Optional(StringEnum(['utf8', 'base64'] as const, { default: 'utf8', description: 'How output bytes are written in `data`' })),
});

/** One event of a process's output stream (NDJSON line, SSE `data:`, or an item of the JSON answer). */
export const ProcessEvent = Type.Object(
  {
    type: StringEnum(['start', 'stdout', 'stderr', 'dropped', 'exit'] as const, {
      description:
        '`start`: the process (a streamed start only); `stdout`/`stderr`: output; `dropped`: output no longer kept was skipped; `exit`: how it ended (the last event)',
    }),
    seq: Type.Optional(Type.Integer({ description: 'stdout/stderr: the event number (SSE: also its id)' })),
    data: Type.Optional(Type.String({ description: 'stdout/stderr: the bytes, as `encoding` says' })),
    events: Type.Optional(Type.Integer({ description: 'dropped: how many events were skipped' })),
    process: Type.Optional(Type.Ref('ProcessInfo', { description: 'start and exit: the process' })),
  },
  { $id: 'ProcessEvent' },
);

export const ProcessOutputPage = Type.Object(
  {
    events: Type.Array(Type.Ref('ProcessEvent')),
    process: Type.Ref('ProcessInfo'),
    next_after: Type.Integer({ description: 'Pass as `after` to read what comes next' }),
  },
  { $id: 'ProcessOutputPage' },
);

export const ProcessStdinRequest = Type.Object(
  {
    data: Type.Optional(Type.String({ maxLength: 1_048_576, description: 'Text for stdin (UTF-8)' })),
    data_base64: Type.Optional(Type.String({ maxLength: 1_398_104, description: 'Bytes for stdin, base64 (instead of data)' })),
    eof: Type.Optional(Type.Boolean({ default: false, description: 'Close stdin after writing' })),
  },
  { additionalProperties: false },
);

export const ProcessSignalRequest = Type.Object(
  { signal: StringEnum(SENDABLE_SIGNALS, { description: "Sent to the program's process group" }) },
  { additionalProperties: false },
);

export const PROCESS_SCHEMAS = [ProcessStartRequest, ProcessInfo, ProcessList, ProcessEvent, ProcessOutputPage];
