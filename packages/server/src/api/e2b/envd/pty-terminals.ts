/**
 * E2B's PTYs (`sandbox.pty`, a process started with `pty` set) over sandboxd's terminals (core/terminals.ts): they
 * live in the VM's agent, like the native API's and SSH's, and the facade reaches them only through the
 * TerminalService (create, attach, resize, kill). The SDK names a terminal by its program's pid in the VM, which the
 * agent reports; pids of live processes are unique in the VM, so one pid never names both a command and a terminal.
 */
import { create } from '@bufbuild/protobuf';
import type { Principal } from '../../../core/authenticator.ts';
import { AppError } from '../../../core/errors.ts';
import type { TerminalScope, TerminalService, TerminalView } from '../../../core/terminals.ts';
import { endEventOf } from './process-end.ts';
import { homeOf, resolveCwd } from './process-user.ts';
import { ProcessEventSchema, type ProcessConfig, type ProcessEvent } from './gen/process/process_pb.ts';
import { TerminalInputs } from './pty-input.ts';
import { terminalOutput } from './pty-output.ts';

/** A terminal's size when the request names none (a classic terminal). */
const DEFAULT_SIZE = { cols: 80, rows: 24 };

function scopeOf(sessionId: string): TerminalScope {
  return { kind: 'session', sessionId };
}

/**
 * The program line of a terminal for `user`: the agent starts terminals as root, so another account's terminal
 * runs its program through util-linux's `setpriv`, which sets the ids and execs the program in place (the pid the
 * agent reports stays the program's). Arguments are passed as a list, never through a shell.
 */
function argvFor(config: ProcessConfig, user: string): string[] {
  const program = [config.cmd, ...config.args];
  if (user === 'root') return program;
  return ['setpriv', `--reuid=${user}`, `--regid=${user}`, '--init-groups', '--', ...program];
}

export class SandboxTerminals {
  private readonly inputs: TerminalInputs;

  constructor(private readonly terminals: TerminalService) {
    this.inputs = new TerminalInputs(terminals);
  }

  /** Starts `config` on a new terminal as `user`; resolves once it runs. */
  async start(
    principal: Principal,
    sessionId: string,
    config: ProcessConfig,
    size: { cols: number; rows: number } | undefined,
    user: string,
  ): Promise<TerminalView> {
    const home = homeOf(user);
    return this.terminals.create(principal, scopeOf(sessionId), {
      cols: size?.cols || DEFAULT_SIZE.cols,
      rows: size?.rows || DEFAULT_SIZE.rows,
      argv: argvFor(config, user),
      // As envd does: the account's HOME, USER and LOGNAME, then what the caller set.
      env: { HOME: home, USER: user, LOGNAME: user, ...config.envs },
      cwd: resolveCwd(config.cwd, home),
    });
  }

  /** The session's terminals (running and exited ones the agent still keeps); none while the sandbox has no VM. */
  async list(principal: Principal, sessionId: string): Promise<TerminalView[]> {
    try {
      return await this.terminals.list(principal, scopeOf(sessionId));
    } catch (error) {
      if (error instanceof AppError && (error.code === 'NOT_FOUND' || error.code === 'VM_GONE')) return [];
      throw error;
    }
  }

  /** The terminal's events for the SDK: its start (pid), its scrollback and live output, then its end. */
  async *events(principal: Principal, sessionId: string, terminal: TerminalView, signal: AbortSignal): AsyncGenerator<ProcessEvent> {
    yield create(ProcessEventSchema, { event: { case: 'start', value: { pid: terminal.pid } } });
    const output = terminalOutput(
      async (handlers) => (await this.terminals.attach(principal, scopeOf(sessionId), terminal.pty_id, null, handlers)).attachment,
      signal,
    );
    for await (const item of output) {
      if (item.kind === 'output') yield create(ProcessEventSchema, { event: { case: 'data', value: { output: { case: 'pty', value: item.data } } } });
      else yield endEventOf({ exitCode: item.exit.exitCode, signal: item.exit.signal, failure: null });
    }
  }

  /** Types `data` into the terminal. */
  write(principal: Principal, sessionId: string, terminal: TerminalView, data: Uint8Array): Promise<void> {
    return this.inputs.write(principal, sessionId, terminal.pty_id, Buffer.from(data));
  }

  async resize(principal: Principal, sessionId: string, terminal: TerminalView, size: { cols: number; rows: number }): Promise<void> {
    await this.terminals.resize(principal, scopeOf(sessionId), terminal.pty_id, size.cols, size.rows);
  }

  /**
   * Ends the terminal (any signal the SDK sends): the agent hangs up its process group, as closing a terminal window
   * does, and kills it two seconds later; readers see the end as the program's (`signal: hangup` for a shell).
   */
  async kill(principal: Principal, sessionId: string, terminal: TerminalView): Promise<void> {
    await this.terminals.delete(principal, scopeOf(sessionId), terminal.pty_id);
  }
}
