/**
 * The terminals of this VM by id. Terminals that ended stay listed (with their exit status and scrollback)
 * until the host kills them, so a client that reconnects can still see how its program ended; when the VM is
 * at its limit, the oldest ended terminal nobody watches makes room for a new one.
 */
import { stat } from 'node:fs/promises';
import { AgentFailure } from '../http/agent-failure.ts';
import type { PtyCreateRequest, PtyInfo } from '../protocol/messages.ts';
import { resolveExecutable } from '../exec/resolve-executable.ts';
import { kernelRandomBytes } from '../system/kernel-random.ts';
import type { UserCgroup } from '../exec/user-cgroups.ts';
import { Terminal } from './terminal.ts';

export interface TerminalRegistryOptions {
  pythonCommand: string;
  /** Working directory when a request names none. */
  defaultCwd: string;
  /** Terminals (running or ended) a VM keeps at once. */
  maxTerminals: number;
  /** Between SIGHUP and SIGKILL when a terminal is killed. */
  killGraceMs: number;
  /** A cgroup for each terminal (limits, and a kill that reaches what left its process group). */
  newCgroup?: () => UserCgroup | null;
}

export const DEFAULT_SCROLLBACK_BYTES = 64 * 1024;

export class TerminalRegistry {
  private readonly terminals = new Map<string, Terminal>();

  constructor(private readonly options: TerminalRegistryOptions) {}

  async create(request: PtyCreateRequest): Promise<Terminal> {
    const cwd = request.cwd ?? this.options.defaultCwd;
    const info = await stat(cwd).catch(() => null);
    if (!info?.isDirectory()) throw new AgentFailure('INVALID_CWD', `working directory ${cwd} does not exist or is not a directory`);
    const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color', ...request.env };
    const [program, ...args] = request.argv as [string, ...string[]];
    const resolved = await resolveExecutable(program, env.PATH ?? '/usr/local/bin:/usr/bin:/bin', cwd);
    if (!resolved) throw new AgentFailure('COMMAND_NOT_FOUND', `${program}: command not found`);
    this.makeRoom();
    const terminal = await Terminal.start({
      // From the kernel, reseeded at restore: an id drawn from the agent's own memory would repeat in every clone.
      id: `pty-${kernelRandomBytes(8).toString('hex')}`,
      pythonCommand: this.options.pythonCommand,
      argv: [resolved, ...args],
      command: request.argv,
      cols: request.cols,
      rows: request.rows,
      env,
      cwd,
      scrollbackBytes: request.scrollbackBytes ?? DEFAULT_SCROLLBACK_BYTES,
      cgroup: this.options.newCgroup?.() ?? null,
    }).catch((error: Error) => {
      throw new AgentFailure('INTERNAL', error.message);
    });
    this.terminals.set(terminal.id, terminal);
    return terminal;
  }

  get(id: string): Terminal {
    const terminal = this.terminals.get(id);
    if (!terminal) throw new AgentFailure('TERMINAL_NOT_FOUND', `no terminal ${id} in this VM`);
    return terminal;
  }

  list(): PtyInfo[] {
    return [...this.terminals.values()].map((terminal) => terminal.info());
  }

  /** Ends a terminal's program and forgets the terminal; answers its final state. */
  async kill(id: string): Promise<PtyInfo> {
    const terminal = this.get(id);
    await terminal.kill(this.options.killGraceMs);
    this.terminals.delete(id);
    return terminal.info();
  }

  /** Kills every terminal at once (the agent is stopping). */
  close(): void {
    for (const terminal of this.terminals.values()) void terminal.kill(0);
    this.terminals.clear();
  }

  private makeRoom(): void {
    if (this.terminals.size < this.options.maxTerminals) return;
    const idle = [...this.terminals.values()].find((terminal) => terminal.exit && terminal.attachments === 0);
    if (!idle) {
      throw new AgentFailure('TOO_MANY_TERMINALS', `this VM already runs ${this.options.maxTerminals} terminals: delete one first`);
    }
    this.terminals.delete(idle.id);
  }
}
