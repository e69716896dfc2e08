/**
 * sandbox completion bash|zsh|fish: prints a completion script for the shell, made from the command tree itself (every
 * command, subcommand and option; file names where a command takes paths).
 */
import { Argument, type Command } from 'commander';
import { bashScript } from '../completion/bash.ts';
import { fishScript } from '../completion/fish.ts';
import { completionTree } from '../completion/tree.ts';
import { zshScript } from '../completion/zsh.ts';
import type { Context, GlobalOptions } from '../context.ts';
import { CLI_VERSION } from '../version.ts';

const SHELLS = {
  bash: { script: bashScript, install: 'sandbox completion bash > /etc/bash_completion.d/sandbox   # or in ~/.bashrc: source <(sandbox completion bash)' },
  zsh: { script: zshScript, install: 'source <(sandbox completion zsh)   # in ~/.zshrc, after compinit' },
  fish: { script: fishScript, install: 'sandbox completion fish > ~/.config/fish/completions/sandbox.fish' },
} as const;
type Shell = keyof typeof SHELLS;

export function registerCompletion(program: Command, context: (options: GlobalOptions) => Context): void {
  program
    .command('completion')
    .description('print a shell completion script for sandbox (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(Object.keys(SHELLS)))
    .addHelpText(
      'after',
      `\nInstall:\n${Object.values(SHELLS)
        .map((shell) => `  ${shell.install}`)
        .join('\n')}\n`,
    )
    .action((shell: Shell, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      let root = command;
      while (root.parent) root = root.parent;
      const script = SHELLS[shell].script(completionTree(root), CLI_VERSION);
      ctx.out.result({ shell, script, install: SHELLS[shell].install }, () => script);
    });
}
