/**
 * What the Python client's test files share (python-client.test.ts, heavy, and python-client-install.test.ts,
 * light): the paths of the repository and the client, the system Python, a program run without blocking the event
 * loop, and a copy of the package's sources to build from. It starts nothing itself and imports no server helper,
 * so importing it leaves a file in the lane it asks for (scripts/test-lanes.mjs).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const CLIENT = path.join(REPOSITORY, 'clients/python');
/** The system Python: pyenv's shims come first on PATH here, and the task is the Python the OS ships. */
export const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
/** No __pycache__ folders in the work tree; output as it comes. */
export const PYTHON_ENV = { PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' } as const;

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program without blocking the event loop (the server under test answers from this process). */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? REPOSITORY, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 240_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A failed run's message: its exit code and the ends of its output. */
export function explain(what: string, ran: Ran): string {
  return `${what} exited with ${ran.code}\n--- stdout\n${ran.stdout.slice(-20_000)}\n--- stderr\n${ran.stderr.slice(-20_000)}`;
}

/** A copy of the package's sources (what a checkout has), so builds leave nothing in the work tree. */
export function copyOfPackage(into: string): string {
  const target = path.join(into, 'sandboxd-src');
  fs.mkdirSync(target, { recursive: true });
  for (const name of ['pyproject.toml', 'README.md', 'LICENSE', 'src']) {
    fs.cpSync(path.join(CLIENT, name), path.join(target, name), {
      recursive: true,
      filter: (source) => !/(__pycache__|\.egg-info|\.pyc)$/.test(source),
    });
  }
  return target;
}
