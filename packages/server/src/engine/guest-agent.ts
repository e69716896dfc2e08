/**
 * The core's `GuestAgent` over the agent link of one VM, with the agent's errors translated into the
 * API's: a missing guest file is a 404, a full guest disk a 507, an agent that does not answer a 503, …
 */
import type { Readable } from 'node:stream';
import type { ExecRequest, PythonRunRequest } from '@sandboxd/agent/protocol';
import type { AgentClient, ExecHandle } from '../agent/index.ts';
import { AgentAnswerTooLargeError, AgentOperationError, GuestPathError, GuestPortUnreachableError } from '../agent/index.ts';
import { AppError } from '../core/errors.ts';
import { inSpan } from '../observability/spans.ts';
import type { ExecOutput, ExecSignals, GuestAgent, KeptExecOffsets, PtyCreateOptions, PtyOutput, PythonOutput } from '../core/vm-engine.ts';

/** Maps an agent client error to an AppError the API can answer; other errors pass through. */
export function translateAgentError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  if (error instanceof GuestPathError) {
    const where = error.path && !error.message.includes(error.path) ? ` (${error.path})` : '';
    switch (error.code) {
      case 'ENOENT':
        return new AppError('NOT_FOUND', `no such file or directory in the VM${where}`);
      case 'EACCES':
      case 'EPERM':
      case 'EROFS':
        return new AppError('FORBIDDEN', `the VM refused access${where}: ${error.message}`);
      case 'ENOSPC':
      case 'EDQUOT':
        return new AppError('GUEST_STORAGE_FULL', `the VM's disk is full${where}`);
      case 'EEXIST':
      case 'ENOTDIR':
      case 'EISDIR':
      case 'ENOTEMPTY':
      case 'ELOOP':
        return new AppError('CONFLICT', `${error.message}${where}`);
      default:
        return new AppError('BAD_REQUEST', `${error.message}${where}`);
    }
  }
  if (error instanceof GuestPortUnreachableError) return new AppError('APP_PORT_UNREACHABLE', error.message);
  if (error instanceof AgentAnswerTooLargeError) {
    return new AppError(
      'VM_AGENT_ANSWER_TOO_LARGE',
      `${error.message}: the VM's agent answered more than this call ever needs (was it replaced in the VM?); nothing of it was kept`,
    );
  }
  if (error instanceof AgentOperationError) {
    if (error.code === 'TERMINAL_NOT_FOUND') return new AppError('NOT_FOUND', error.message);
    if (error.code === 'TOO_MANY_TERMINALS') return new AppError('QUOTA_EXCEEDED', error.message);
    if (error.code === 'EXEC_NOT_FOUND') return new AppError('NOT_FOUND', error.message);
    if (error.code === 'TOO_MANY_KEPT_EXECS') return new AppError('QUOTA_EXCEEDED', error.message);
  }
  if (error instanceof AgentOperationError && error.status < 500) return new AppError('BAD_REQUEST', error.message);
  // The VM is kept: a dropped link is reconnected (or, when it cannot be, the VM is killed as agent_lost).
  if (error instanceof Error && error.name.startsWith('Agent')) {
    return new AppError(
      'VM_AGENT_UNAVAILABLE',
      `the VM's agent did not answer: ${error.message}. Retry: the server keeps the VM and reconnects to it; a VM whose agent cannot be reached again is killed (the session's status then says so)`,
    );
  }
  return error;
}

async function translated<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    throw translateAgentError(error);
  }
}

/** Where a VM's connected agent client comes from (`AgentLink`: it waits while a dropped link reconnects). */
export interface AgentClientSource {
  connected(): Promise<AgentClient>;
}

/**
 * Adapts one VM's agent link to the core's `GuestAgent`. Every operation first waits for `ready`: the
 * VM's identity fix-up, which the engine applies in the background after handing the VM out, so nothing
 * can observe the VM before it has its own hostname and id; then for a connected client.
 */
export class ClientGuestAgent implements GuestAgent {
  constructor(
    private readonly link: AgentClientSource,
    private readonly ready: Promise<void> = Promise.resolve(),
    /** Hears each call's end (the engine's `agent-call` event: the agent timings of /metrics). */
    private readonly onCall: (call: string, ms: number, ok: boolean) => void = () => {},
  ) {}

  private async client(): Promise<AgentClient> {
    await translated(this.ready);
    return translated(this.link.connected());
  }

  /**
   * One call to the agent, in a span `agent.<name>` when it is part of a trace (a request's; the warm pool's calls
   * start none), which covers the wait for the VM's identity and link too.
   */
  private gated<T>(name: string, operation: (client: AgentClient) => Promise<T>): Promise<T> {
    return inSpan(`agent.${name}`, { childOnly: true }, async () => {
      const started = performance.now();
      let ok = false;
      try {
        const client = await this.client();
        // Async, so that an operation that throws at once (the session just closed) is translated too.
        const result = await translated((async () => operation(client))());
        ok = true;
        return result;
      } finally {
        this.onCall(name, performance.now() - started, ok);
      }
    });
  }

  exec(request: ExecRequest, output: ExecOutput, signal?: AbortSignal, stdin?: Readable, signals?: ExecSignals) {
    const { stdin: _stdin, ...options } = request;
    return this.gated('exec', (client) =>
      drive(client.exec({ ...options, ...(signal ? { signal } : {}), ...(stdin ? { stdin: true } : {}) }), output, stdin, signals),
    );
  }

  attachExec(pid: number, from: KeptExecOffsets, output: ExecOutput, signal?: AbortSignal, stdin?: Readable, signals?: ExecSignals) {
    return this.gated('attach_exec', (client) => drive(client.attachExec({ pid, ...from }, signal ? { signal } : {}), output, stdin, signals));
  }

  listKeptExecs() {
    return this.gated('list_kept_execs', (client) => client.listKeptExecs());
  }

  runPython(request: PythonRunRequest, signal?: AbortSignal, output?: PythonOutput) {
    return this.gated('run_python', (client) => client.runPython({ ...request, ...(signal ? { signal } : {}), ...(output ? { output } : {}) }));
  }

  writeFile(path: string, body: Readable, options: { mode?: number } = {}) {
    return this.gated('write_file', async (client) => {
      try {
        return await client.writeFile(path, body, options);
      } catch (error) {
        // The API takes a path ending in "/" as "into this directory, under the file's own name".
        if (error instanceof GuestPathError && error.code === 'EISDIR') {
          throw new AppError('CONFLICT', `${error.path ?? path} is a directory: end the path with "/" to put the file inside it`);
        }
        throw error;
      }
    });
  }

  extractTar(directory: string, body: Readable, options: { gzip?: boolean } = {}) {
    return this.gated('extract_tar', (client) => client.extractTar(directory, body, options));
  }

  readFile(path: string) {
    return this.gated('read_file', (client) => client.readFile(path));
  }

  stat(path: string) {
    return this.gated('stat', (client) => client.stat(path));
  }

  listDir(path: string) {
    return this.gated('list_dir', (client) => client.listDir(path));
  }

  async mkdir(path: string, options: { parents?: boolean; mode?: number } = {}) {
    await this.gated('mkdir', (client) => client.mkdir(path, options));
  }

  async remove(path: string, options: { recursive?: boolean } = {}) {
    return (await this.gated('remove', (client) => client.remove(path, options))).removed;
  }

  resetPython(contextId: string) {
    return this.gated('reset_python', (client) => client.resetPython(contextId));
  }

  usage() {
    return this.gated('usage', (client) => client.usage());
  }

  openTunnel(port: number) {
    return this.gated('open_tunnel', (client) => client.openTunnel(port));
  }

  createPty(options: PtyCreateOptions) {
    return this.gated('create_pty', (client) => client.createPty(options));
  }

  listPtys() {
    return this.gated('list_ptys', (client) => client.listPtys());
  }

  getPty(id: string) {
    return this.gated('get_pty', (client) => client.getPty(id));
  }

  resizePty(id: string, cols: number, rows: number) {
    return this.gated('resize_pty', (client) => client.resizePty(id, cols, rows));
  }

  killPty(id: string) {
    return this.gated('kill_pty', (client) => client.killPty(id));
  }

  attachPty(id: string, output: PtyOutput) {
    return this.gated('attach_pty', (client) => client.attachPty(id, output));
  }
}

/** Runs an exec stream to its end: output and the start to `output`, `stdin` and `signals` to the process. */
async function drive(handle: ExecHandle, output: ExecOutput, stdin?: Readable, signals?: ExecSignals) {
  signals?.attach((name) => handle.kill(name));
  if (output.onStarted) {
    const onStarted = output.onStarted.bind(output);
    handle.started.then(
      ({ pid, stdoutOffset, stderrOffset }) => onStarted(pid, stdoutOffset === undefined ? undefined : { stdoutOffset, stderrOffset: stderrOffset ?? 0 }),
      () => undefined,
    );
  }
  const pump = (async () => {
    for await (const event of handle.output) (event.type === 'stdout' ? output.onStdout : output.onStderr)(event.data);
  })();
  // Input is fed as the program takes it (writeStdin waits for the agent); a program that exits first ends it.
  const feed = stdin
    ? (async () => {
        for await (const chunk of stdin) await handle.writeStdin(chunk as Buffer);
        handle.endStdin();
      })().catch(() => undefined)
    : undefined;
  try {
    const [result] = await Promise.all([handle.result, pump]);
    return result;
  } finally {
    // Also when the stream failed: the feed must not swallow input meant for a later stream of a kept exec.
    if (stdin && !stdin.destroyed) stdin.destroy();
    await feed;
  }
}
