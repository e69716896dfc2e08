/** The execute request, its sync answer, and the execution (task) record. */
import { Type, type Static } from 'typebox';
import { InputError } from '../../../core/errors.ts';
import type { ExecuteRequest } from '../../../core/executions.ts';
import { EXECUTION_MODES, EXECUTION_STATUSES, EXECUTION_TRIGGERS, LANGUAGES, type Execution } from '../../../model.ts';
import { StringEnum } from '../../schemas/common.ts';

export const ExecuteCommandRequest = Type.Object(
  {
    command: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'A command (bash) or code; `code` is the same field for code' })),
    code: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    language: StringEnum(LANGUAGES, {
      default: 'python',
      description: "python runs in the session's stateful interpreter (variables survive between calls); bash and node run a fresh process",
    }),
    session_id: Type.Optional(
      Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'Omit to run in a new session (its id is in the answer)' }),
    ),
    timeout: Type.Integer({
      minimum: 1,
      maximum: 600,
      default: 60,
      description: 'How long the HTTP call waits, seconds (not the VM lifetime); the command goes on after a 408',
    }),
    api_key: Type.Optional(Type.String()),
  },
  { $id: 'ExecuteCommandRequest', title: 'ExecuteCommandRequest' },
);

export const ExecuteResponse = Type.Object(
  {
    stdout: Type.String(),
    stderr: Type.String(),
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    execution_time: Type.Union([Type.Number(), Type.Null()], { description: 'Seconds' }),
    cpu_time: Type.Union([Type.Number(), Type.Null()], { description: 'CPU seconds used by the code' }),
    execution_id: Type.Integer(),
    session_id: Type.String(),
    vm_id: Type.Union([Type.String(), Type.Null()]),
    status: StringEnum(EXECUTION_STATUSES, { description: 'completed, failed or timeout (queued and running only in task records)' }),
    stdout_truncated: Type.Boolean(),
    stderr_truncated: Type.Boolean(),
  },
  { $id: 'ExecuteResponse', title: 'ExecuteResponse' },
);

export const TaskRecord = Type.Object(
  {
    id: Type.Integer(),
    task_id: Type.Integer({ description: 'Same as id (the async answer calls it task_id)' }),
    session_id: Type.String(),
    vm_id: Type.Union([Type.String(), Type.Null()]),
    mode: StringEnum(EXECUTION_MODES),
    trigger: StringEnum(EXECUTION_TRIGGERS, {
      description:
        "`request` (an execute call) or `pre_stop` (the VM's pre-stop lifecycle hook ran it before a kill, pause or the end of its lifetime; `status` timeout means the hook was cut and the stop went on)",
    }),
    language: StringEnum(LANGUAGES),
    code: Type.String({ description: 'The code or command (first 64 KiB)' }),
    status: StringEnum(EXECUTION_STATUSES),
    is_complete: Type.Boolean(),
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    serialized_stdout: Type.String(),
    serialized_stderr: Type.String(),
    stdout_truncated: Type.Boolean(),
    stderr_truncated: Type.Boolean(),
    execution_time: Type.Union([Type.Number(), Type.Null()]),
    cpu_time: Type.Union([Type.Number(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'TaskRecord', title: 'TaskRecord' },
);

export const EXECUTION_SCHEMAS = [ExecuteCommandRequest, ExecuteResponse, TaskRecord];

/** The core request from the body; neither `command` nor `code` is a 422 like any missing field. */
export function toExecuteRequest(body: Static<typeof ExecuteCommandRequest>): ExecuteRequest {
  const preferred = body.language === 'bash' ? (body.command ?? body.code) : (body.code ?? body.command);
  if (preferred === undefined) {
    throw new InputError([{ loc: ['body', 'command'], msg: 'Field required: give the code to run in "code" or "command"', type: 'missing' }]);
  }
  return { sessionId: body.session_id ?? null, language: body.language, source: preferred, timeoutSeconds: body.timeout };
}

const COMPLETE = new Set(['completed', 'failed', 'timeout']);

export function toExecuteResponse(execution: Execution): Static<typeof ExecuteResponse> {
  return {
    stdout: execution.stdout,
    stderr: execution.stderr,
    exit_code: execution.exitCode,
    execution_time: execution.executionTime,
    cpu_time: execution.cpuTime,
    execution_id: execution.id,
    session_id: execution.sessionId,
    vm_id: execution.vmId,
    status: execution.status,
    stdout_truncated: execution.stdoutTruncated,
    stderr_truncated: execution.stderrTruncated,
  };
}

export function toTaskRecord(execution: Execution): Static<typeof TaskRecord> {
  return {
    id: execution.id,
    task_id: execution.id,
    session_id: execution.sessionId,
    vm_id: execution.vmId,
    mode: execution.mode,
    trigger: execution.trigger,
    language: execution.language,
    code: execution.source,
    status: execution.status,
    is_complete: COMPLETE.has(execution.status),
    exit_code: execution.exitCode,
    error: execution.error,
    serialized_stdout: execution.stdout,
    serialized_stderr: execution.stderr,
    stdout_truncated: execution.stdoutTruncated,
    stderr_truncated: execution.stderrTruncated,
    execution_time: execution.executionTime,
    cpu_time: execution.cpuTime,
    created_at: execution.createdAt,
    started_at: execution.startedAt,
    completed_at: execution.completedAt,
  };
}
