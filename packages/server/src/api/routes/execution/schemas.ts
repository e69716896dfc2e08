/** The execute request, its sync answer, and the execution (task) record. */
import { Type, type Static } from 'typebox';
import { InputError } from '../../../core/errors.ts';
import type { ExecuteRequest, Language } from '../../../core/executions.ts';
import type { ExecutionRow } from '../../../store/schema.ts';

export const ExecuteCommandRequest = Type.Object(
  {
    command: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'A command (bash) or code; `code` is the same field for code' })),
    code: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    language: Type.Unsafe<Language>({
      type: 'string',
      enum: ['python', 'bash', 'node'],
      default: 'python',
      description: 'python runs in the session\'s stateful interpreter (variables survive between calls); bash and node run a fresh process',
    }),
    session_id: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()], { description: 'Omit to run in a new session (its id is in the answer)' })),
    timeout: Type.Integer({ minimum: 1, maximum: 600, default: 60, description: 'How long the HTTP call waits, seconds (not the VM lifetime); the command goes on after a 408' }),
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
    status: Type.String({ description: 'completed, failed or timeout' }),
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
    mode: Type.String({ description: 'sync or async' }),
    language: Type.String(),
    code: Type.String({ description: 'The code or command (first 64 KiB)' }),
    status: Type.String({ description: 'queued, running, completed, failed or timeout' }),
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

export function toExecuteResponse(row: ExecutionRow): Static<typeof ExecuteResponse> {
  return {
    stdout: row.stdout,
    stderr: row.stderr,
    exit_code: row.exit_code,
    execution_time: row.execution_time,
    cpu_time: row.cpu_time,
    execution_id: row.id,
    session_id: row.session_id,
    vm_id: row.vm_id,
    status: row.status,
    stdout_truncated: row.stdout_truncated === 1,
    stderr_truncated: row.stderr_truncated === 1,
  };
}

export function toTaskRecord(row: ExecutionRow): Static<typeof TaskRecord> {
  return {
    id: row.id,
    task_id: row.id,
    session_id: row.session_id,
    vm_id: row.vm_id,
    mode: row.mode,
    language: row.language,
    code: row.source,
    status: row.status,
    is_complete: COMPLETE.has(row.status),
    exit_code: row.exit_code,
    error: row.error,
    serialized_stdout: row.stdout,
    serialized_stderr: row.stderr,
    stdout_truncated: row.stdout_truncated === 1,
    stderr_truncated: row.stderr_truncated === 1,
    execution_time: row.execution_time,
    cpu_time: row.cpu_time,
    created_at: row.created_at,
    started_at: row.started_at,
    completed_at: row.completed_at,
  };
}
