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
    context_id: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
        description:
          "Python only: run in this context of the session (POST /v1/sessions/{session_id}/contexts), an interpreter with variables of its own; omit (or `default`) for the session's own interpreter",
      }),
    ),
    api_key: Type.Optional(Type.String()),
  },
  { $id: 'ExecuteCommandRequest', title: 'ExecuteCommandRequest' },
);

export const RichResult = Type.Object(
  {
    text: Type.Optional(Type.String({ description: '`repr()` of the value (always there)' })),
    html: Type.Optional(Type.String({ description: 'HTML, e.g. a pandas DataFrame as a table' })),
    markdown: Type.Optional(Type.String()),
    svg: Type.Optional(Type.String()),
    png: Type.Optional(Type.String({ description: 'A PNG image, base64 (a matplotlib figure)' })),
    jpeg: Type.Optional(Type.String({ description: 'A JPEG image, base64' })),
    pdf: Type.Optional(Type.String({ description: 'A PDF, base64' })),
    latex: Type.Optional(Type.String()),
    json: Type.Optional(Type.Unknown({ description: 'JSON data (`_repr_json_`)' })),
    javascript: Type.Optional(Type.String()),
    is_main_result: Type.Boolean({ description: "True for the value of the code's last expression; false for `display()` calls and figures" }),
  },
  {
    $id: 'RichResult',
    title: 'RichResult',
    description:
      "One rich result of a Python run, as a notebook shows it: each format the value shows itself in (IPython's `_repr_*_` methods, which pandas, matplotlib and PIL implement). A run's results come in the order they were made: what `display()` was given, then each matplotlib figure the code left open (drawn as PNG, then closed: `plt.show()` is not needed), then the last expression's value. At most 8 MiB of results per run are kept; a result past that is replaced by a text note.",
  },
);

export const PythonExceptionInfo = Type.Object(
  {
    name: Type.String({ description: 'The exception class, e.g. `ZeroDivisionError`' }),
    value: Type.String({ description: '`str()` of the exception' }),
    traceback: Type.String({ description: "The traceback as Python prints it, without the interpreter's own frames" }),
  },
  { $id: 'PythonExceptionInfo', title: 'PythonExceptionInfo', description: 'The exception a Python run ended with' },
);

const RICH_FIELDS = {
  results: Type.Array(Type.Ref('RichResult'), { description: 'Python only: rich results (figures, tables, display data); empty for commands' }),
  exception: Type.Union([Type.Ref('PythonExceptionInfo'), Type.Null()], { description: 'Python only: the exception the run ended with, else null' }),
  context_id: Type.String({ description: "Python only: the context it ran in (`default`: the session's own interpreter)" }),
};

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
    ...RICH_FIELDS,
    resumed: Type.Optional(
      Type.Object(
        { ms: Type.Integer({ description: 'How long the resume took, milliseconds' }) },
        {
          description:
            "Present only when this execute resumed the session's paused VM first (auto-resume: paused by `auto_pause`, `on_expiry` or on request); the `Sandboxd-Resumed` header says the same",
        },
      ),
    ),
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
    ...RICH_FIELDS,
  },
  { $id: 'TaskRecord', title: 'TaskRecord' },
);

export const EXECUTION_SCHEMAS = [ExecuteCommandRequest, RichResult, PythonExceptionInfo, ExecuteResponse, TaskRecord];

/** The core request from the body; neither `command` nor `code` is a 422 like any missing field. */
export function toExecuteRequest(body: Static<typeof ExecuteCommandRequest>): ExecuteRequest {
  const preferred = body.language === 'bash' ? (body.command ?? body.code) : (body.code ?? body.command);
  if (preferred === undefined) {
    throw new InputError([{ loc: ['body', 'command'], msg: 'Field required: give the code to run in "code" or "command"', type: 'missing' }]);
  }
  return { sessionId: body.session_id ?? null, language: body.language, source: preferred, timeoutSeconds: body.timeout, contextId: body.context_id ?? null };
}

const COMPLETE = new Set(['completed', 'failed', 'timeout']);

/** The rich parts of a record, as the wire names them. */
function richFields(execution: Execution) {
  return {
    results: execution.results.map(({ isMainResult, ...formats }) => ({ ...formats, is_main_result: isMainResult })),
    exception: execution.exception,
    context_id: execution.contextId ?? 'default',
  };
}

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
    ...richFields(execution),
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
    ...richFields(execution),
  };
}
