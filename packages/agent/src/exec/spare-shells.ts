/**
 * The warm path of a shell command (issue 35): a shell started ahead of need, waiting in its own process group and
 * cgroup for the command it will run. Starting `bash -c <command>` at request time costs, under TCG, Node's
 * synchronous fork of the agent (~29 ms with the event loop blocked), a fresh cgroup (~2 ms) and bash's own start
 * (~45 ms): with a spare all of that happened before the request, and the command only pays for its own work.
 *
 * There are two kinds, one spare of each: for `bash -c` (what executions and processes run) and for `bash -lc`
 * (the agent's default shell). The login kind is `bash --login --noprofile -c <bootstrap>` (a login shell whose
 * profile is not read yet), the other `bash -c <bootstrap>`. Each is spawned like any exec (`startUserProgram`: its
 * own session and process group, its own cgroup, a user program's OOM score), with a fourth pipe (fd 3) on which
 * the bootstrap waits. A command is handed over as NUL-separated fields: the working directory, the request's
 * environment entries, the command line. The bootstrap then does what `bash -c` or `bash -lc` would, in the same
 * order: the directory and the environment first, then (login kind) the login profile (`/etc/profile`, then the
 * first of `~/.bash_profile`, `~/.bash_login`, `~/.profile`), then the command. So a command keeps every semantics
 * of a cold one that matters to a caller: its pid is `$$` and its process group (a kill ends it all), its cgroup's
 * limits and CPU accounting, its exit code or killing signal (the agent is its parent, as before), its environment
 * and profile (read at command time: a `.profile` edited by an earlier command counts), its cwd.
 * What differs, and is documented: a syntax error names `eval` (`bash: eval: line 1: …`) where bash -c says `-c`;
 * and bash -c runs a lone simple command by exec'ing it, so a program killed by a signal on its own (say a
 * segfault) ends a cold command with that signal, a warm one with exit code 128+N, as in any bash script.
 *
 * State the spare took at its start and a restored VM must not share with its clones is renewed at command time:
 * the hostname bash keeps in `$HOSTNAME`, the seed of `$RANDOM` (from the kernel's generator, read through
 * /proc so that the bash of any image does it: `$SRANDOM` is bash 5.1's), and
 * `$SECONDS`. Only requests that a spare serves exactly take one: a command for the default shell or this bash's
 * `-c`/`-lc`, as the agent's own user, with environment names bash does not treat specially at start (see
 * `servesEnvironment`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { basename, isAbsolute } from 'node:path';
import type { ExecCpuTime } from '../protocol/messages.ts';
import { startUserProgram } from './user-program.ts';
import type { UserCgroup, UserCgroups } from './user-cgroups.ts';

/**
 * What a spare runs before it waits: under TCG every process translates guest code the first time it runs it, at
 * its own (randomized) addresses, so a spare that only waited would translate the paths of the hand-over and of
 * the command (builtins, redirections, eval, a fork and exec) while its command waits. Run once here, in the
 * spare itself and off the request's path, they are translated already (a forked child shares its parent's
 * addresses, so its translations too). Nothing here is seen by the command: all output goes to /dev/null (an
 * image without /bin/true prints nothing either), the variables are unset, the directory is the one it is in.
 */
const WARM_UP = [
  '{',
  '  echo warm; printf "%s" warm',
  '  cd -- "$PWD"',
  '  __sandboxd_warm=1; export __sandboxd_warm; unset __sandboxd_warm',
  "  eval ': warm'",
  '  if [[ -r /dev/null ]]; then . /dev/null; fi',
  '  read -r __sandboxd_warm < /proc/sys/kernel/hostname; unset __sandboxd_warm',
  '  if [[ -x /bin/true ]]; then /bin/true; fi',
  '} > /dev/null 2>&1',
];

/**
 * The bootstrap a spare runs: it reads the command's fields from fd 3, then does what `bash -c` (with `login`,
 * `bash -lc`) does. Every name it uses is unset before the command runs. `read -d ''` reads up to a NUL; a missing
 * field (the agent went away) ends the spare with 125.
 */
const bootstrap = (login: boolean): string =>
  [
    // OLDPWD as bash took it from the environment at its start, before the warm-up's cd.
    '__sandboxd_oldpwd=${OLDPWD-}',
    ...WARM_UP,
    "IFS= read -r -d '' __sandboxd_cwd <&3 || exit 125",
    "IFS= read -r -d '' __sandboxd_n <&3 || exit 125",
    'while (( __sandboxd_n-- > 0 )); do',
    "  IFS= read -r -d '' __sandboxd_kv <&3 || exit 125",
    '  export "$__sandboxd_kv"',
    'done',
    "IFS= read -r -d '' __sandboxd_command <&3 || exit 125",
    'exec 3<&-',
    'read -r HOSTNAME < /proc/sys/kernel/hostname',
    'if read -r __sandboxd_seed < /proc/sys/kernel/random/uuid; then RANDOM=$((16#${__sandboxd_seed:0:8})); fi',
    'unset __sandboxd_seed',
    'SECONDS=0',
    // The working directory as a cold bash would have it: OLDPWD is what bash found in its environment.
    'cd -- "$__sandboxd_cwd" || exit 1',
    'if [[ -n $__sandboxd_oldpwd ]]; then OLDPWD=$__sandboxd_oldpwd; else unset OLDPWD; fi',
    'unset __sandboxd_cwd __sandboxd_n __sandboxd_kv __sandboxd_oldpwd',
    // The login profile, as bash reads it for a login shell.
    ...(login
      ? [
          'if [[ -r /etc/profile ]]; then . /etc/profile; fi',
          'if [[ -r ~/.bash_profile ]]; then . ~/.bash_profile; elif [[ -r ~/.bash_login ]]; then . ~/.bash_login; elif [[ -r ~/.profile ]]; then . ~/.profile; fi',
        ]
      : []),
    'eval "unset __sandboxd_command; $__sandboxd_command"',
  ].join('\n');

/**
 * Names bash reads specially when it starts (options, identity, exported functions): a request that sets one is
 * run cold, where bash sees it in its environment from the start as it always did.
 */
const STARTUP_NAMES = new Set([
  'SHELLOPTS',
  'BASHOPTS',
  'BASH_ENV',
  'ENV',
  'EUID',
  'UID',
  'PPID',
  'HOSTNAME',
  'RANDOM',
  'SRANDOM',
  'SECONDS',
  'IFS',
  'POSIXLY_CORRECT',
  'LINENO',
]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether a spare can take on `env` (the request's own entries) exactly as a cold `bash -lc` would. */
export function servesEnvironment(env: Record<string, string>): boolean {
  return Object.keys(env).every((name) => NAME.test(name) && !STARTUP_NAMES.has(name) && !name.startsWith('BASH'));
}

/** A spare taken for a command: its process, its cgroup, and the CPU it used before the command. */
export interface TakenSpare {
  child: ChildProcess;
  cgroup: UserCgroup | null;
  cpuBefore: ExecCpuTime | null;
  /** Hands over the command; the spare runs it at once. */
  run(command: { cwd: string; env: Record<string, string>; command: string }): void;
}

export interface SpareShellsOptions {
  /** The shell (`bash`: the bootstrap is bash; any other shell has no spares). */
  shell: string;
  /** A login shell's spares (`bash -lc`) or a plain one's (`bash -c`). */
  login: boolean;
  cgroups: UserCgroups | null;
  /** The environment a cold exec starts from (the agent's). */
  env: NodeJS.ProcessEnv;
  /** The working directory the spare waits in (a command's own is applied when it arrives). */
  cwd: string;
  /** How long after a take the next spare is started, unless the command ended sooner (ms). */
  refillDelayMs?: number;
}

/** How long after a command's end its spare's successor starts (see `commandEnded`). */
const REFILL_AFTER_END_MS = 50;

/** Keeps one spare shell of a kind ready. */
export class SpareShells {
  private spare: { child: ChildProcess; cgroup: UserCgroup | null } | undefined;
  private refillTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: SpareShellsOptions) {}

  /** Whether this shell has spares at all. */
  get enabled(): boolean {
    return basename(this.options.shell) === 'bash';
  }

  /** Starts the first spare (at agent start: it is then part of every snapshot, ready in every restored VM). */
  start(): void {
    this.fill();
  }

  /** The ready spare, or undefined (none yet, or it died); taking one schedules the next. */
  take(): TakenSpare | undefined {
    const spare = this.spare;
    this.spare = undefined;
    if (!spare) {
      this.fillSoon();
      return undefined;
    }
    if (spare.child.exitCode !== null || spare.child.signalCode !== null || !spare.child.stdio[3]) {
      // Killed while it waited (a `pkill bash`): make another for the next command.
      void spare.cgroup?.release();
      this.fillSoon();
      return undefined;
    }
    this.fillSoon();
    const pipe = spare.child.stdio[3] as NodeJS.WritableStream;
    return {
      child: spare.child,
      cgroup: spare.cgroup,
      cpuBefore: spare.cgroup?.readCpu() ?? null,
      run: ({ cwd, env, command }) => {
        const entries = Object.entries(env).map(([name, value]) => `${name}=${value}`);
        pipe.end([cwd, String(entries.length), ...entries, command].map((field) => `${field}\0`).join(''));
      },
    };
  }

  /** A command that took a spare ended: the next spare may start now if it has not. */
  commandEnded(): void {
    if (!this.refillTimer) return;
    clearTimeout(this.refillTimer);
    // Not at once: the command's exit frame is still on its way out, and the fork blocks the agent's event loop
    // (measured under TCG: a refill in the same turn added ~100 ms to the command's round trip).
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.fill();
    }, REFILL_AFTER_END_MS);
    this.refillTimer.unref();
  }

  /** Ends the spare (agent shutdown). */
  close(): void {
    this.closed = true;
    clearTimeout(this.refillTimer);
    const spare = this.spare;
    this.spare = undefined;
    if (spare) {
      try {
        process.kill(-spare.child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
      void spare.cgroup?.release();
    }
  }

  /**
   * The next spare, once the command that took the last one has ended or after the delay: starting it costs a
   * synchronous fork of the agent and bash's start, which should not compete with the command just handed over.
   */
  private fillSoon(): void {
    if (this.refillTimer || this.closed) return;
    this.refillTimer = setTimeout(() => {
      this.refillTimer = undefined;
      this.fill();
    }, this.options.refillDelayMs ?? 300);
    this.refillTimer.unref();
  }

  private fill(): void {
    if (this.spare || this.closed || !this.enabled) return;
    const cgroup = this.options.cgroups?.group('exec') ?? null;
    let child: ChildProcess;
    try {
      child = startUserProgram(
        () =>
          spawn(this.options.shell, [...(this.options.login ? ['--login', '--noprofile'] : []), '-c', bootstrap(this.options.login)], {
            cwd: this.options.cwd,
            env: this.options.env,
            detached: true,
            stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
          }),
        cgroup,
      );
    } catch {
      void cgroup?.release();
      return;
    }
    child.on('error', () => undefined);
    for (const pipe of child.stdio) pipe?.on('error', () => undefined);
    const spare = { child, cgroup };
    child.once('exit', () => {
      if (this.spare !== spare) return;
      this.spare = undefined;
      void cgroup?.release();
    });
    this.spare = spare;
  }
}

/** The agent's spares: one for its default shell's `-lc`, one for the same bash's `-c`. */
export class SpareShellSet {
  readonly login: SpareShells;
  readonly plain: SpareShells;
  private readonly realShell: string | null;

  constructor(options: Omit<SpareShellsOptions, 'login'>) {
    this.login = new SpareShells({ ...options, login: true });
    this.plain = new SpareShells({ ...options, login: false });
    this.realShell = realpathOrNull(options.shell);
  }

  start(): void {
    this.login.start();
    this.plain.start();
  }

  close(): void {
    this.login.close();
    this.plain.close();
  }

  /**
   * The spares that serve a request's shell: none given (the default, `bash -lc`), or this bash (by path, as
   * itself or through a link) with `-c` or `-lc`. Any other shell or flag runs cold.
   */
  forShell(shell: readonly string[] | undefined): SpareShells | undefined {
    if (!shell) return this.login;
    if (shell.length !== 2 || !isAbsolute(shell[0]!) || !this.realShell || realpathOrNull(shell[0]!) !== this.realShell) return undefined;
    if (shell[1] === '-c') return this.plain;
    if (shell[1] === '-lc') return this.login;
    return undefined;
  }
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
