/**
 * `POST /v1/exec`: a full-duplex framed stream. Reads the `Request` frame, starts the process, then streams
 * output frames while applying `Stdin`/`StdinEnd`/`Signal` frames from the host, and ends with `Exit`.
 * A host that resets the stream before the end kills the process group, unless the request asked to keep it
 * (`keep`, kept-execs.ts): then it runs on and a host re-attaches to it later (exec-attach-route.ts).
 */
import { stat } from 'node:fs/promises';
import type { ServerHttp2Stream } from 'node:http2';
import { decodeJsonPayload, encodeFrame, encodeJsonFrame, FrameType, readFrames, type Frame } from '../protocol/frames.ts';
import { MAX_KEPT_EXEC_INFO_BYTES, type ExecRequest, type ExecSignal } from '../protocol/messages.ts';
import { AgentFailure, toErrorAnswer } from '../http/agent-failure.ts';
import { optionalBoolean, optionalInteger, optionalString, optionalStringArray, optionalStringMap, parseJsonObject } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import type { UserCgroups } from './user-cgroups.ts';
import { ExecProcess } from './exec-process.ts';
import type { KeptExec, KeptExecs } from './kept-execs.ts';
import { resolveExecutable } from './resolve-executable.ts';
import { findGuestUser, userEnvironment, type GuestUser } from './guest-users.ts';
import { servesEnvironment, type SpareShellSet } from './spare-shells.ts';

/** What the exec route needs from the agent. */
export interface ExecRouteDeps {
  cgroups: UserCgroups | null;
  /** Shell for `command` requests without their own, e.g. `['/bin/bash', '-lc']`. */
  defaultShell: string[];
  /** Working directory when a request names none. */
  defaultCwd: string;
  /** The agent's table of kept execs (requests with `keep`). */
  kept: KeptExecs;
  /** Shells started ahead of need: a command for the default shell or `bash -c` runs in one (spare-shells.ts). */
  spares?: SpareShellSet;
}

/** Longest deadline an execution may ask for (one day); the host enforces its own limits. */
const MAX_TIMEOUT_MS = 24 * 3600 * 1000;

/** Builds the handler of `POST /v1/exec`. */
export function createExecRoute(deps: ExecRouteDeps) {
  return async ({ stream }: RouteRequest): Promise<void> => {
    const frames = readFrames(stream)[Symbol.asyncIterator]();
    const first = await frames.next();
    if (first.done || first.value.type !== FrameType.Request) throw new AgentFailure('BAD_REQUEST', 'an exec stream must start with a Request frame');
    const request = parseExecRequest(first.value);
    const user = request.user === undefined ? null : await findGuestUser(request.user);
    if (request.user !== undefined && !user) throw new AgentFailure('UNKNOWN_USER', `the VM has no user ${request.user}`);
    const env = asUser(user, { ...process.env, ...request.env });
    const cwd = request.cwd ?? user?.home ?? deps.defaultCwd;
    await checkCwd(cwd);
    const argv = request.argv ?? [...(request.shell ?? deps.defaultShell), request.command as string];
    const program = await resolveExecutable(argv[0] as string, env.PATH ?? '/usr/local/bin:/usr/bin:/bin', cwd);
    if (!program) throw new AgentFailure('COMMAND_NOT_FOUND', `${argv[0]}: command not found`);
    // The warm path: a command line for the default shell or this bash's -c, as the agent's own user, runs in a spare.
    const spares = request.command !== undefined && !user && servesEnvironment(request.env ?? {}) ? deps.spares?.forShell(request.shell) : undefined;
    const warm = spares?.take();
    const cgroup = warm ? warm.cgroup : (deps.cgroups?.group('exec') ?? null);
    // Before the process starts: a full table refuses the request with a plain error answer.
    const kept = request.keep ? deps.kept.prepare(request.info ?? {}) : null;

    stream.respond({ ':status': 200, 'content-type': 'application/vnd.sandboxd.frames' });
    let waitingForDrain = false;
    const send = (frame: Buffer): void => {
      if (stream.destroyed || stream.closed) return;
      if (!stream.write(frame) && !waitingForDrain) {
        // The host (or the link) is slower than the process: stop reading its pipes until the window opens.
        waitingForDrain = true;
        child.pauseOutput();
        stream.once('drain', () => {
          waitingForDrain = false;
          child.resumeOutput();
        });
      }
    };
    const child: ExecProcess = new ExecProcess(
      {
        argv: [program, ...argv.slice(1)],
        env,
        cwd,
        stdin: request.stdin === true,
        cgroup,
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
        onStdout: kept ? (chunk) => kept.output('stdout', chunk) : (chunk) => send(encodeFrame(FrameType.Stdout, chunk)),
        onStderr: kept ? (chunk) => kept.output('stderr', chunk) : (chunk) => send(encodeFrame(FrameType.Stderr, chunk)),
        ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
      },
      warm ? { child: warm.child, cpuBefore: warm.cpuBefore } : undefined,
    );
    if (warm) {
      warm.run({ cwd, env: request.env ?? {}, command: request.command as string });
      void child.result.finally(() => spares?.commandEnded()).catch(() => undefined);
    }
    if (kept && child.pid > 0) return runKept(stream, frames, child, kept, deps.kept);
    const running = child;
    send(encodeJsonFrame(FrameType.Started, { pid: running.pid }));

    let finished = false;
    stream.once('close', () => {
      if (!finished) running.abort();
    });
    void applyHostFrames(frames, running, true).catch((error: unknown) => {
      if (finished || stream.destroyed) return;
      send(encodeJsonFrame(FrameType.Error, toErrorAnswer(error).body));
      running.abort();
    });

    let end: Buffer;
    try {
      end = encodeJsonFrame(FrameType.Exit, await running.result);
    } catch (error) {
      // It never started (e.g. the VM's process limit): the stream is answered already, so the error is a frame.
      end = encodeJsonFrame(FrameType.Error, toErrorAnswer(error).body);
    }
    finished = true;
    if (stream.destroyed || stream.closed) return;
    stream.end(end);
  };
}

/**
 * A kept exec's first stream: attached like a later one (from offset 0), and when it closes before the exit the
 * process runs on. The exit goes to whichever stream is attached then, or waits for the next attach.
 */
async function runKept(stream: ServerHttp2Stream, frames: AsyncIterator<Frame>, child: ExecProcess, kept: KeptExec, table: KeptExecs): Promise<void> {
  kept.bind(child);
  table.register(kept);
  kept.attach(stream, { stdoutOffset: 0, stderrOffset: 0 });
  serveAttachedStream(stream, frames, kept);
  try {
    kept.finish(await child.result);
  } catch {
    // Not reached for a process that has a pid (only a spawn that failed rejects); nothing is left to keep.
    kept.finish({ exitCode: null, signal: null, timedOut: false, durationMs: 0, cpu: null });
  }
}

/** Applies an attached stream's frames to a kept exec; its end (or reset) only detaches it. */
export function serveAttachedStream(stream: ServerHttp2Stream, frames: AsyncIterator<Frame>, kept: KeptExec): void {
  stream.once('close', () => kept.detach(stream));
  void applyHostFrames(frames, kept.running, false).then(
    // The body ended cleanly: after the exit, that is the host saying it has it (kept-execs.ts `hostEnded`).
    (ended) => ended && kept.hostEnded(stream),
    (error: unknown) => {
      if (stream.destroyed || stream.closed) return;
      // A malformed frame from the host: this stream ends with the error; the process runs on for the next one.
      kept.detach(stream);
      stream.end(encodeJsonFrame(FrameType.Error, toErrorAnswer(error).body));
    },
  );
}

/**
 * Applies the host's frames after the request: stdin bytes, stdin end, signals. `endStdinAtBodyEnd`: the end of the
 * request body closes stdin (a plain exec); a kept exec's stdin closes only on `StdinEnd`, since its body also ends
 * when the link goes away. Resolves true when the body ended cleanly, false when the stream was reset.
 */
export async function applyHostFrames(frames: AsyncIterator<Frame>, running: ExecProcess, endStdinAtBodyEnd: boolean): Promise<boolean> {
  for (;;) {
    let next: IteratorResult<Frame>;
    try {
      next = await frames.next();
    } catch (error) {
      // A reset stream ends the request body with an error; the close handler deals with the process.
      if ((error as Error).name === 'FrameError') throw new AgentFailure('BAD_REQUEST', (error as Error).message);
      return false;
    }
    if (next.done) {
      if (endStdinAtBodyEnd) running.endStdin();
      return true;
    }
    const frame = next.value;
    if (frame.type === FrameType.Stdin) {
      if (!running.writeStdin(frame.payload)) await running.stdinDrain();
    } else if (frame.type === FrameType.StdinEnd) {
      running.endStdin();
    } else if (frame.type === FrameType.Signal) {
      const { signal } = decodeJsonPayload<ExecSignal>(frame);
      try {
        running.signal(String(signal));
      } catch {
        throw new AgentFailure('BAD_REQUEST', `unknown signal ${String(signal)}`);
      }
    } else {
      throw new AgentFailure('BAD_REQUEST', `unexpected frame type ${frame.type} in an exec request`);
    }
  }
}

function parseExecRequest(frame: Frame): ExecRequest {
  const body = parseJsonObject(frame.payload);
  const argv = optionalStringArray(body, 'argv');
  const command = optionalString(body, 'command');
  if ((argv === undefined) === (command === undefined)) throw new AgentFailure('BAD_REQUEST', 'give exactly one of "argv" and "command"');
  if (argv !== undefined && argv.length === 0) throw new AgentFailure('BAD_REQUEST', '"argv" must not be empty');
  const shell = optionalStringArray(body, 'shell');
  if (shell !== undefined && shell.length === 0) throw new AgentFailure('BAD_REQUEST', '"shell" must not be empty');
  const strings = [...(argv ?? []), command ?? '', ...(shell ?? []), ...Object.entries(optionalStringMap(body, 'env') ?? {}).flat()];
  if (strings.some((value) => value.includes('\0'))) throw new AgentFailure('BAD_REQUEST', 'arguments and environment must not contain NUL bytes');
  const request: ExecRequest = {};
  if (argv) request.argv = argv;
  if (command !== undefined) request.command = command;
  if (shell) request.shell = shell;
  const env = optionalStringMap(body, 'env');
  if (env) request.env = env;
  const cwd = optionalString(body, 'cwd');
  if (cwd !== undefined) request.cwd = cwd;
  const timeoutMs = optionalInteger(body, 'timeoutMs', 1, MAX_TIMEOUT_MS);
  if (timeoutMs !== undefined) request.timeoutMs = timeoutMs;
  const stdin = optionalBoolean(body, 'stdin');
  if (stdin !== undefined) request.stdin = stdin;
  const user = optionalString(body, 'user');
  if (user !== undefined) request.user = user;
  const keep = optionalBoolean(body, 'keep');
  if (keep) request.keep = keep;
  const info = body.info;
  if (info !== undefined) {
    if (typeof info !== 'object' || info === null || Array.isArray(info)) throw new AgentFailure('BAD_REQUEST', '"info" must be a JSON object');
    if (Buffer.byteLength(JSON.stringify(info)) > MAX_KEPT_EXEC_INFO_BYTES) {
      throw new AgentFailure('BAD_REQUEST', `"info" must be at most ${MAX_KEPT_EXEC_INFO_BYTES} bytes of JSON`);
    }
    request.info = info as Record<string, unknown>;
  }
  return request;
}

/** The environment of a program run as `user`: the request's values win, except HOME, USER and LOGNAME. */
function asUser(user: GuestUser | null, env: Record<string, string | undefined>): Record<string, string | undefined> {
  return user ? userEnvironment(user, env) : env;
}

async function checkCwd(cwd: string): Promise<void> {
  const info = await stat(cwd).catch(() => null);
  if (!info?.isDirectory()) throw new AgentFailure('INVALID_CWD', `working directory ${cwd} does not exist or is not a directory`);
}
