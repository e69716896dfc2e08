/** Host side of the guest agent protocol: a typed client of the agent in one VM. */
export { AgentClient, type AgentClientEvents, type AgentTarget, type ConnectOptions, type RestoreOptions } from './agent-client.ts';
export type { CallOptions } from './deadline.ts';
export { ANSWER_MAX_BYTES } from './agent-session.ts';
export {
  AgentAnswerTooLargeError,
  AgentError,
  AgentOperationError,
  AgentProtocolError,
  AgentTimeoutError,
  AgentUnavailableError,
  GuestPathError,
  GuestPortUnreachableError,
} from './errors.ts';
export { ExecHandle, DEFAULT_EXEC_TIMEOUT_MS, type AttachExecOptions, type CollectedExec, type ExecOptions, type ExecOutputEvent } from './exec.ts';
export type { ExtractTarOptions, FileDownload, FileSource, WriteFileOptions } from './files.ts';
export { DEFAULT_PYTHON_TIMEOUT_MS, type RunPythonOptions } from './python.ts';
export type {
  ExecResult,
  FileStat,
  HelloResponse,
  PythonError,
  PythonRunResult,
  RestoreResponse,
  SnapshotPrepareResponse,
  UsageResponse,
} from '@sandboxd/agent/protocol';
