/**
 * What every command of the `sandboxd` admin command shares: its error type (with the exit code), the store
 * opened for one command, and how answers are printed (text, or one JSON line with `--json`).
 */
import type { Command } from 'commander';
import { loadConfig } from '../config/index.ts';
import { createServices, type CoreServices } from '../services.ts';
import { openDatabase } from '../store/database.ts';

/** A refusal of the admin command itself: printed as `sandboxd: <message>`, the process exits with `exitCode`. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** True when `--json` was given (a global option: before or after the command). */
export function wantsJson(command: Command): boolean {
  return Boolean(command.optsWithGlobals<{ json?: boolean }>().json);
}

/** Prints one answer: `value` as a JSON line with `--json`, else `text`. */
export function print(json: boolean, value: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/** Reads all of stdin as text, without its final newline (`--password-stdin`). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** A database URL without its password, to show. */
export function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/** Runs `run` with the core services over the configured store (opened, and migrated, for this command only). */
export async function withServices<T>(run: (services: CoreServices) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await openDatabase({ dataDir: config.server.dataDir, databaseUrl: config.server.databaseUrl });
  try {
    return await run(await createServices(config, database));
  } finally {
    await database.close();
  }
}
