/** Runs a helper program (qemu-img, nft, useradd) by argv and collects its output: shared by vm, net and image. */
import { execFile } from 'node:child_process';

export interface ExecResult {
  stdout: string;
  stderr: string;
}

/** Runs `program args`; rejects with an Error carrying stderr when it fails or exceeds `timeoutMs`. */
export function runProgram(program: string, args: string[], options: { input?: string; timeoutMs?: number } = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(program, args, { timeout: options.timeoutMs ?? 30_000, maxBuffer: 4 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        const detail = stderr.trim() || error.message;
        reject(new Error(`${program} ${args.join(' ')}: ${detail}`, { cause: error }));
      } else resolve({ stdout, stderr });
    });
    // A program that exits without reading its input (a missing or broken binary) must fail the call, not the process.
    child.stdin?.on('error', () => undefined);
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
