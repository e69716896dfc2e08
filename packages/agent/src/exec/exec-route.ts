/**
 * `POST /v1/exec`: a full-duplex framed stream. Reads the `Request` frame, starts the process, then streams
 * output frames while applying `Stdin`/`StdinEnd`/`Signal` frames from the host, and ends with `Exit`.
 * A host that resets the stream before the end kills the process group.
 */
import { stat } from 'node:fs/promises';
import { decodeJsonPayload, encodeFrame, encodeJsonFrame, FrameType, readFrames, type Frame } from '../protocol/frames.ts';
import type { ExecRequest, ExecSignal } from '../protocol/messages.ts';
import { AgentFailure, toErrorAnswer } from '../http/agent-failure.ts';
import { optionalBoolean, optionalInteger, optionalString, optionalStringArray, optionalStringMap, parseJsonObject } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import type { UserCgroups } from './user-cgroups.ts';
import { ExecProcess } from './exec-process.ts';
import { resolveExecutable } from './resolve-executable.ts';
import { findGuestUser, userEnvironment, type GuestUser } from './guest-users.ts';

/** What the exec route needs from the agent. */
export interface ExecRouteDeps {
  cgroups: UserCgroups | null;
  /** Shell for `command` requests without their own, e.g. `['/bin/bash', '-lc']`. */
  defaultShell: string[];
  /** Working directory when a request names none. */
  defaultCwd: string;
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
    const cgroup = deps.cgroups?.group('exec') ?? null;

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
    const child: ExecProcess = new ExecProcess({
      argv: [program, ...argv.slice(1)],
      env,
      cwd,
      stdin: request.stdin === true,
      cgroup,
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      onStdout: (chunk) => send(encodeFrame(FrameType.Stdout, chunk)),
      onStderr: (chunk) => send(encodeFrame(FrameType.Stderr, chunk)),
      ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
    });
    const running = child;
    send(encodeJsonFrame(FrameType.Started, { pid: running.pid }));

    let finished = false;
    stream.once('close', () => {
      if (!finished) running.abort();
    });
    void applyHostFrames(frames, running).catch((error: unknown) => {
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

/** Applies the host's frames after the request: stdin bytes, stdin end, signals. */
async function applyHostFrames(frames: AsyncIterator<Frame>, running: ExecProcess): Promise<void> {
  for (;;) {
    let next: IteratorResult<Frame>;
    try {
      next = await frames.next();
    } catch (error) {
      // A reset stream ends the request body with an error; the close handler deals with the process.
      if ((error as Error).name === 'FrameError') throw new AgentFailure('BAD_REQUEST', (error as Error).message);
      return;
    }
    if (next.done) {
      running.endStdin();
      return;
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
