/** The `sandbox` command: every subcommand, global options, and one place where errors become messages and exit codes. */
import { Command, CommanderError, Option } from 'commander';
import { registerApps } from './commands/apps.ts';
import { registerBrowser } from './commands/browser.ts';
import { registerCreate } from './commands/create.ts';
import { registerDesktop } from './commands/desktop.ts';
import { registerDomains } from './commands/domains.ts';
import { registerEgress } from './commands/egress.ts';
import { registerExec } from './commands/exec.ts';
import { registerProcesses } from './commands/processes.ts';
import { registerCompletion } from './commands/completion.ts';
import { registerContexts } from './commands/contexts.ts';
import { registerFiles } from './commands/files.ts';
import { registerFileVerbs } from './commands/file-verbs.ts';
import { registerKeys } from './commands/keys.ts';
import { registerLogin } from './commands/login.ts';
import { registerLogout } from './commands/logout.ts';
import { registerMcp } from './commands/mcp.ts';
import { registerSessionCommands } from './commands/sessions.ts';
import { registerVmCommands } from './commands/vms.ts';
import { registerShell } from './commands/shell.ts';
import { registerSsh } from './commands/ssh.ts';
import { registerVault } from './commands/vault.ts';
import { registerVolumes } from './commands/volumes.ts';
import { registerNetworks } from './commands/networks.ts';
import { registerTemplates } from './commands/templates.ts';
import { registerWhoami } from './commands/whoami.ts';
import { createContext, type Context, type GlobalOptions } from './context.ts';
import { EXIT, explain, UsageError } from './errors.ts';
import { CLI_VERSION } from './version.ts';

export function buildProgram(): Command {
  const program = new Command('sandbox')
    .description('Run code in sandboxd microVMs from your terminal')
    .version(CLI_VERSION, '-V, --version')
    .addOption(new Option('--url <url>', 'sandboxd server (default: SANDBOXD_URL, else the last `sandbox login`, else http://127.0.0.1:8080)'))
    .addOption(new Option('--api-key <key>', 'API key (prefer SANDBOXD_API_KEY or `sandbox login`: arguments are visible to other users)'))
    .option('--json', 'print results as JSON (errors too, on stderr)')
    .addOption(
      new Option(
        '--progress',
        'show progress bars for upload, download and template builds on stderr even when it is not a terminal (plain lines about once a second)',
      ),
    )
    .addOption(new Option('--no-progress', 'show no progress bars or spinners (default: shown when stderr is a terminal and not --json)'))
    // Each command's --help lists --json, --progress and the rest too: they are taken after any command.
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError()
    .exitOverride();
  const context = (options: GlobalOptions): Context => createContext(options);
  registerLogin(program, context);
  registerLogout(program, context);
  registerWhoami(program, context);
  registerCreate(program, context);
  registerExec(program, context);
  registerProcesses(program, context);
  registerContexts(program, context);
  registerFiles(program, context);
  registerFileVerbs(program, context);
  registerSessionCommands(program, context);
  registerVmCommands(program, context);
  registerShell(program, context);
  registerSsh(program, context);
  registerKeys(program, context);
  registerDomains(program, context);
  registerEgress(program, context);
  registerVault(program, context);
  registerVolumes(program, context);
  registerNetworks(program, context);
  registerTemplates(program, context);
  registerApps(program, context);
  registerBrowser(program, context);
  registerDesktop(program, context);
  registerMcp(program, context);
  registerCompletion(program, context);
  for (const command of program.commands) command.exitOverride();
  return program;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end here with code 0; usage mistakes were already printed by commander.
      process.exitCode = error.exitCode === 0 ? 0 : EXIT.usage;
      return;
    }
    const options = program.opts<GlobalOptions>();
    const baseUrl = (() => {
      try {
        return createContext(options).baseUrl;
      } catch {
        return options.url ?? 'the server';
      }
    })();
    const explained = explain(error, baseUrl);
    if (options.json) {
      const e = error as { status?: number; code?: string };
      process.stderr.write(
        `${JSON.stringify({ error: { type: explained.type, message: explained.message, status: e.status ?? null, code: e.code ?? null, exit_code: explained.exitCode } })}\n`,
      );
    } else {
      process.stderr.write(`sandbox: ${explained.message}\n`);
    }
    process.exitCode = explained.exitCode;
    // SANDBOXD_DEBUG, like every variable of the tool (SANDBOX_DEBUG, its old name, still works).
    if (!(error instanceof UsageError) && (process.env.SANDBOXD_DEBUG || process.env.SANDBOX_DEBUG)) console.error(error);
  }
}

await main(process.argv);
