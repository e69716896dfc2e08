/** Stateful Python: runs in a per-context interpreter that keeps its variables between runs. */
import {
  decodeJsonPayload,
  FrameDecoder,
  FrameType,
  ROUTES,
  type AgentErrorBody,
  type PythonResetResponse,
  type PythonRunResult,
} from '@sandboxd/agent/protocol';
import { ANSWER_MAX_BYTES, DEFAULT_TIMEOUTS_MS, parseJson, type AgentSession } from './agent-session.ts';
import type { CallOptions } from './deadline.ts';
import { AgentError, AgentProtocolError, errorFromAgentAnswer } from './errors.ts';

/** Options of {@link runPython}. */
export interface RunPythonOptions {
  /** The interpreter to use; created on first use. */
  contextId: string;
  code: string;
  /** Guest deadline: the code is interrupted (KeyboardInterrupt), the interpreter keeps its state. Default 60 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Run in the agent's spare interpreter, in a scratch namespace (`contextId` is then ignored): warms a VM. */
  spare?: boolean;
  /** Where the context's interpreter starts, when this run starts it (agent 1.6). */
  cwd?: string;
  /** The run's output as it is written (agent 1.7; an older agent's comes whole at the end). */
  output?: PythonOutput;
}

/** Where a streamed run's output goes as it arrives. */
export interface PythonOutput {
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
}

/** Default guest deadline of a Python run. */
export const DEFAULT_PYTHON_TIMEOUT_MS = 60_000;

/** Runs code; the answer carries stdout, stderr, the last expression's repr and the exception, if any. */
export function runPython(session: AgentSession, options: RunPythonOptions): Promise<PythonRunResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PYTHON_TIMEOUT_MS;
  const call: CallOptions = { timeoutMs: timeoutMs + DEFAULT_TIMEOUTS_MS.guestDeadlineMargin };
  if (options.signal) call.signal = options.signal;
  const body = {
    contextId: options.contextId,
    code: options.code,
    timeoutMs,
    ...(options.spare ? { spare: true } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  };
  if (options.output && !options.spare) return runPythonStreamed(session, { ...body, stream: true }, call, options.output);
  return session.json<PythonRunResult>('runPython', 'POST', ROUTES.pythonRun, body, call, 0, ANSWER_MAX_BYTES.pythonRun);
}

/**
 * A run whose output reaches `output` as the agent sends it (frames), then its result (`Exit` frame). An agent
 * older than 1.7 ignores `stream` and answers JSON: its output is then given whole, once the run ended.
 */
async function runPythonStreamed(session: AgentSession, body: Record<string, unknown>, call: CallOptions, output: PythonOutput): Promise<PythonRunResult> {
  const operation = 'runPython';
  const deadline = session.deadline(operation, call, 0);
  try {
    const stream = session.stream(operation, { ':method': 'POST', ':path': ROUTES.pythonRun, 'content-type': 'application/json' }, deadline);
    stream.end(JSON.stringify(body));
    const { status, headers } = await session.response(operation, stream, deadline);
    if (status !== 200) throw errorFromAgentAnswer(status, await session.body(operation, stream, deadline), { operation });
    if (!String(headers['content-type'] ?? '').includes('frames')) {
      const result = parseJson<PythonRunResult>(operation, await session.body(operation, stream, deadline, ANSWER_MAX_BYTES.pythonRun));
      if (result.stdout) output.onStdout(Buffer.from(result.stdout));
      if (result.stderr) output.onStderr(Buffer.from(result.stderr));
      return result;
    }
    const decoder = new FrameDecoder();
    let result: PythonRunResult | undefined;
    let failure: Error | undefined;
    await deadline.race(
      (async () => {
        for await (const chunk of stream) {
          for (const frame of decoder.push(chunk as Buffer)) {
            if (frame.type === FrameType.Stdout) output.onStdout(frame.payload);
            else if (frame.type === FrameType.Stderr) output.onStderr(frame.payload);
            else if (frame.type === FrameType.Exit) result = decodeJsonPayload<PythonRunResult>(frame);
            else if (frame.type === FrameType.Error)
              failure = errorFromAgentAnswer(500, Buffer.from(JSON.stringify(decodeJsonPayload<AgentErrorBody>(frame))), { operation });
          }
        }
      })(),
    );
    if (failure) throw failure;
    if (!result) throw session.open ? new AgentProtocolError(`${operation}: the agent ended the stream without a result`) : session.streamFailure(operation);
    return result;
  } catch (error) {
    throw error instanceof AgentError ? error : session.streamFailure(operation, error as Error);
  } finally {
    deadline.clear();
  }
}

/** Ends a context's interpreter (its state is lost). */
export function resetPython(session: AgentSession, contextId: string, options?: CallOptions): Promise<PythonResetResponse> {
  return session.json<PythonResetResponse>('resetPython', 'POST', ROUTES.pythonReset, { contextId }, options, DEFAULT_TIMEOUTS_MS.control);
}
