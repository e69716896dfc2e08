/**
 * `sandboxd` — the server's admin command. Works offline, directly against the configured store
 * (SANDBOXD_DATA_DIR / SANDBOXD_DATABASE_URL), so it can create users and keys without a running server.
 * `sandboxd --help` lists the commands, `sandboxd help <command>` (or `<command> --help`) explains one; the
 * command tree is `program.ts`, one module per group of commands beside it.
 *
 * Exit codes: 0 done; 1 the command failed (a refusal or an error, said on stderr); 2 a usage error (unknown
 * command or option, missing argument) or bad configuration.
 */
import { CommanderError } from 'commander';
import { ConfigError } from '../config/index.ts';
import { AppError } from '../core/errors.ts';
import { CliError } from './context.ts';
import { buildProgram, type ProgramOutcome } from './program.ts';

/** The exit code for what the command threw, after saying why on stderr (commander has said it already). */
function exitCodeOf(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
  if (error instanceof CliError || error instanceof AppError || error instanceof ConfigError) {
    process.stderr.write(`sandboxd: ${error.message}\n`);
    return error instanceof CliError ? error.exitCode : error instanceof ConfigError ? 2 : 1;
  }
  process.stderr.write(`sandboxd: ${(error as Error).stack ?? error}\n`);
  return 1;
}

const outcome: ProgramOutcome = { keepRunning: false };
buildProgram(outcome)
  .parseAsync(process.argv)
  .then(
    () => {
      if (!outcome.keepRunning) process.exit(0);
    },
    (error: unknown) => process.exit(exitCodeOf(error)),
  );
