/**
 * The `sandboxd` admin command's tree (commander): every command, its arguments, options and help. Each group
 * lives in a module of its own; this file only assembles them and owns the global options and the help's
 * framing. Nothing here exits the process: `admin.ts` does, from what parsing and the actions throw.
 */
import { Command } from 'commander';
import { describeSettings } from '../config/index.ts';
import { registerBackupCommands } from './backup-commands.ts';
import { registerClusterCommands } from './cluster-commands.ts';
import { print, wantsJson } from './context.ts';
import { registerUserCommands } from './user-commands.ts';

/** What running the command line left to do: keep the process alive (`serve`), or exit. */
export interface ProgramOutcome {
  keepRunning: boolean;
}

/** Builds the command tree; `outcome` is filled in by the command that runs. */
export function buildProgram(outcome: ProgramOutcome): Command {
  const program = new Command('sandboxd');
  program
    .description(
      'The sandboxd server and its admin commands. The commands work offline, directly on the configured store ' +
        '(SANDBOXD_DATA_DIR, or SANDBOXD_DATABASE_URL for PostgreSQL): no running server is needed.',
    )
    .option('--json', 'print machine-readable output (one JSON object)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    // Set before the commands are added: each inherits them.
    .exitOverride()
    .configureOutput({ outputError: (message, write) => write(`sandboxd: ${message.replace(/^error: /, '')}`) })
    .showSuggestionAfterError(true)
    .showHelpAfterError('(`sandboxd --help` lists the commands; `sandboxd help <command>` explains one)')
    // The settings close the top-level help, as they closed the one usage text before (the docs point here).
    .addHelpText(
      'after',
      () =>
        '\n`sandboxd help <command>` or `sandboxd <command> --help` explains a command.\n\n' +
        'Configuration (the environment, and <data dir>/cluster.json once joined; `sandboxd config` lists only these):\n' +
        describeSettings()
          .map((s) => `  ${s.env.padEnd(34)} ${s.description}`)
          .join('\n'),
    );

  program
    .command('serve')
    .description('run the API server (same as npm start without the set-up)')
    .action(async () => {
      outcome.keepRunning = true;
      await import('../main.ts');
    });

  registerUserCommands(program);
  registerClusterCommands(program);
  registerBackupCommands(program);

  program
    .command('config')
    .description('list the configuration settings: each environment variable and what it does')
    .action((_options: unknown, command: Command) => {
      const settings = describeSettings();
      if (wantsJson(command)) print(true, { settings }, '');
      else process.stdout.write(`${settings.map((s) => `${s.env.padEnd(34)} ${s.description}`).join('\n')}\n`);
    });

  return program;
}
