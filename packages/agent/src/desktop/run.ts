/**
 * Runs the X tools the desktop service is built on (xwd, xdotool, wmctrl, xrandr, ffprobe) as argv, never
 * through a shell: request values (typed text, key names) reach them as single arguments.
 */
import { spawn } from 'node:child_process';

/** A tool that failed: its exit status and what it printed on stderr. */
export class ToolError extends Error {
  override name = 'ToolError';
  constructor(
    readonly tool: string,
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface RunOptions {
  /** Environment laid over the service's (DISPLAY is always set). */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Most stdout bytes kept; more is an error (a screenshot of 8K × 8K at 32 bpp is 256 MiB). */
  maxOutputBytes?: number;
}

/** Runs `argv` to its end and answers its stdout; rejects with ToolError on a non-zero exit or a timeout. */
export function runTool(argv: string[], options: RunOptions = {}): Promise<Buffer> {
  const [command, ...args] = argv;
  if (!command) throw new Error('runTool: empty argv');
  const maxOutput = options.maxOutputBytes ?? 16 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: ToolError | undefined;
    const timer = setTimeout(() => {
      failure = new ToolError(command, `${command} did not finish within ${options.timeoutMs} ms`, stderr);
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxOutput) {
        failure ??= new ToolError(command, `${command} printed more than ${maxOutput} bytes`, stderr);
        child.kill('SIGKILL');
        return;
      }
      chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new ToolError(command, `cannot run ${command}: ${error.message}`, ''));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code !== 0)
        reject(
          new ToolError(
            command,
            `${command} failed (${signal ?? `exit ${code}`})${stderr ? `: ${stderr.trim().split('\n').slice(-3).join(' ')}` : ''}`,
            stderr,
          ),
        );
      else resolve(Buffer.concat(chunks, size));
    });
  });
}
