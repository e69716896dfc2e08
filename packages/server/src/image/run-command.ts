import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ImageBuildError } from './errors.ts';

/** Debian package that provides each host tool the build runs, for "please install" messages. */
const TOOL_PACKAGES: Record<string, string> = {
  mmdebstrap: 'mmdebstrap',
  xz: 'xz-utils',
  cpio: 'cpio',
  tar: 'tar',
  'mkfs.ext4': 'e2fsprogs',
  busybox: 'busybox-static',
  flock: 'util-linux',
  skopeo: 'skopeo',
  unshare: 'util-linux',
  umoci: 'umoci',
  git: 'git',
};

/** How many output lines a failure keeps for its error message. */
const TAIL_LINES = 40;

/** Options of `runCommand`. */
export interface RunCommandOptions {
  cwd?: string;
  /** The command's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Bytes written to the command's stdin (stdin is empty otherwise). */
  input?: Buffer | string;
  /** Where stdout goes: captured as text (default), split into lines for `onLine`, or piped into a stream. */
  stdout?: 'capture' | 'lines' | Writable;
  /** Called with each line of stderr, and of stdout when `stdout` is `'lines'`. */
  onLine?: (line: string) => void;
  /** Aborting kills the command (SIGTERM); the call then rejects with the signal's `AbortError`. */
  signal?: AbortSignal;
}

/**
 * Runs a command by argv (never through a shell) and resolves with its captured stdout.
 * Rejects with `ImageBuildError` `IMAGE_TOOL_MISSING` when the program is not installed and
 * `IMAGE_COMMAND_FAILED` (with the output's last lines) when it exits non-zero.
 */
export async function runCommand(program: string, args: readonly string[], options: RunCommandOptions = {}): Promise<string> {
  const mode = options.stdout ?? 'capture';
  const child = spawn(program, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], signal: options.signal });
  const tail: string[] = [];
  const remember = (line: string): void => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    options.onLine?.(line);
  };

  let captured = '';
  const done: Promise<unknown>[] = [forwardLines(child.stderr, remember)];
  if (mode === 'capture') {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      captured += chunk;
    });
  } else if (mode === 'lines') {
    done.push(forwardLines(child.stdout, remember));
  } else {
    done.push(pipeline(child.stdout, mode));
  }
  // EPIPE here means the command exited early; its exit status says why, so the write error is dropped.
  child.stdin.on('error', () => {});
  child.stdin.end(options.input);

  const exit = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve(signal === null ? code : null));
  });
  let code: number | null;
  try {
    [code] = await Promise.all([exit, ...done]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      const pkg = TOOL_PACKAGES[program];
      throw new ImageBuildError('IMAGE_TOOL_MISSING', `${program} is not installed${pkg ? ` (apt-get install ${pkg})` : ''}`, { cause: error });
    }
    throw error;
  }
  if (code !== 0) {
    const how = code === null ? 'was killed' : `exited with status ${code}`;
    const last = tail.slice(-5).join(' | ');
    throw new ImageBuildError('IMAGE_COMMAND_FAILED', `${program} ${how}${last ? `: ${last}` : ''}`, { outputTail: tail });
  }
  return captured;
}

/** Splits a byte stream into lines (on \n or \r, so progress bars become lines too) and drops empty ones. */
async function forwardLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): Promise<void> {
  let pending = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) {
    const parts = (pending + String(chunk)).split(/\r\n|\n|\r/);
    pending = parts.pop() ?? '';
    for (const line of parts) if (line.trim() !== '') onLine(line);
  }
  if (pending.trim() !== '') onLine(pending);
}
