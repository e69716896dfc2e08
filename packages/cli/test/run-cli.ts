/** Runs the `sandbox` command as a child process, with HOME and XDG_CONFIG_HOME in a temp dir. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain .mjs script of the set-up, without declarations
import { ensureClientPackagesBuilt } from '../../../scripts/build-sdk.mjs';

/**
 * The checkout's entry point, as a user runs it: the compiled command (dist/), as published. The set-up built it;
 * it is built again here when the CLI's, the SDK's or the MCP server's sources changed since (a few seconds; a
 * no-op otherwise), so a test never runs code older than the sources.
 */
export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/sandbox.mjs');
(ensureClientPackagesBuilt as (step: (message: string) => void) => boolean)(() => undefined);

export interface CliResult {
  code: number | null;
  stdout: string;
  /** stdout as the bytes it was (a file downloaded to "-"). */
  stdoutBytes: Buffer;
  stderr: string;
  /** stdout parsed as JSON, when it is. */
  json: any;
}

export interface CliHome {
  home: string;
  configHome: string;
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  remove(): void;
}

/** A fresh home directory; the environment has no SANDBOXD_* of the caller's. */
export function makeHome(baseUrl: string): CliHome {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-cli-home-'));
  const configHome = path.join(home, 'config');
  return {
    home,
    configHome,
    env: (extra = {}) => {
      const env: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SANDBOXD_')) env[k] = v;
      return { ...env, HOME: home, XDG_CONFIG_HOME: configHome, SANDBOXD_URL: baseUrl, ...extra };
    },
    remove: () => fs.rmSync(home, { recursive: true, force: true }),
  };
}

function parse(stdout: string): unknown {
  try {
    return JSON.parse(stdout);
  } catch {
    return undefined;
  }
}

/** How the command is run by default: this checkout's entry point (BIN); `['sandbox']` runs the one on PATH. */
const THIS_CHECKOUT = [process.execPath, BIN];

/** Starts the command; `done` resolves with its output when it exits (a program that cannot start: code null). */
export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  input?: string,
  command: string[] = THIS_CHECKOUT,
): { child: ChildProcess; done: Promise<CliResult>; stderrSoFar: () => string } {
  const child = spawn(command[0]!, [...command.slice(1), ...args], { env, cwd: env.HOME, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  const stdoutChunks: Buffer[] = [];
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => {
    stdoutChunks.push(c);
    stdout += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin!.end(input ?? '');
  const done = new Promise<CliResult>((resolve) => {
    child.once('error', (error) =>
      resolve({ code: null, stdout, stdoutBytes: Buffer.concat(stdoutChunks), stderr: `${stderr}cannot run ${command[0]}: ${error.message}`, json: undefined }),
    );
    child.once('close', (code) => resolve({ code, stdout, stdoutBytes: Buffer.concat(stdoutChunks), stderr, json: parse(stdout) }));
  });
  return { child, done, stderrSoFar: () => stderr };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string, command?: string[]): Promise<CliResult> {
  return startCli(args, env, input, command).done;
}

/** Waits until `read()` matches `pattern`; returns the match. */
export async function waitFor(read: () => string, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(read());
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in:\n${read()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
