/** Stateful Python: runs in a per-context interpreter that keeps its variables between runs. */
import { ROUTES, type PythonResetResponse, type PythonRunResult } from '@sandboxd/agent/protocol';
import { ANSWER_MAX_BYTES, DEFAULT_TIMEOUTS_MS, type AgentSession } from './agent-session.ts';
import type { CallOptions } from './deadline.ts';

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
  return session.json<PythonRunResult>('runPython', 'POST', ROUTES.pythonRun, body, call, 0, ANSWER_MAX_BYTES.pythonRun);
}

/** Ends a context's interpreter (its state is lost). */
export function resetPython(session: AgentSession, contextId: string, options?: CallOptions): Promise<PythonResetResponse> {
  return session.json<PythonResetResponse>('resetPython', 'POST', ROUTES.pythonReset, { contextId }, options, DEFAULT_TIMEOUTS_MS.control);
}
