/**
 * The command tree as shell completion needs it, read from commander's own (so a command or an option added anywhere
 * is completed without a change here): each command's subcommands (with aliases), options and the fixed choices of
 * its first argument.
 */
import { Help, type Command } from 'commander';

export interface CompletionOption {
  /** `-s`, `--session`. */
  flags: string[];
  /** The word after it is its value (`--session ID`), not a command or an argument. */
  takesValue: boolean;
  description: string;
}

export interface CompletionCommand {
  /** Names from the root, each a command's own name (not an alias); empty for the root. */
  path: string[];
  /** Its name and its aliases. */
  names: string[];
  description: string;
  subcommands: CompletionCommand[];
  /** Its own options (the root's: the global ones, valid after any command too). */
  options: CompletionOption[];
  /** The fixed values its first argument takes (`completion bash|zsh|fish`), else empty. */
  argumentChoices: string[];
  /** It takes arguments (local or remote paths, mostly): the shell offers file names for them. */
  takesArguments: boolean;
}

const help = new Help();

function optionsOf(command: Command): CompletionOption[] {
  return help.visibleOptions(command).map((option) => ({
    flags: [option.short, option.long].filter((flag): flag is string => flag !== undefined),
    takesValue: option.required || option.optional,
    description: option.description,
  }));
}

function nodeOf(command: Command, parentPath: string[], isRoot: boolean): CompletionCommand {
  const path = isRoot ? [] : [...parentPath, command.name()];
  const subcommands = help.visibleCommands(command);
  const siblings = subcommands.filter((sub) => sub.name() !== 'help').map((sub) => sub.name());
  return {
    path,
    names: [command.name(), ...command.aliases()],
    description: command.description(),
    subcommands: subcommands.map((sub) =>
      // commander's own `help [command]` takes the names of its sibling commands.
      sub.name() === 'help' && sub.commands.length === 0 ? { ...nodeOf(sub, path, false), argumentChoices: siblings } : nodeOf(sub, path, false),
    ),
    options: optionsOf(command),
    argumentChoices: [...(command.registeredArguments[0]?.argChoices ?? [])],
    takesArguments: command.registeredArguments.length > 0,
  };
}

/** The tree under `program`. */
export function completionTree(program: Command): CompletionCommand {
  return nodeOf(program, [], true);
}

/** Every command of the tree, the root first, parents before their subcommands. */
export function allCommands(root: CompletionCommand): CompletionCommand[] {
  return [root, ...root.subcommands.flatMap(allCommands)];
}

/** The root's options that hold after any command too (all but --version; --help every command has itself). */
export function globalOptions(root: CompletionCommand): CompletionOption[] {
  return root.options.filter((option) => !option.flags.includes('--version') && !option.flags.includes('--help'));
}

/** The options valid at `command`: its own and the global ones. */
export function optionsAt(root: CompletionCommand, command: CompletionCommand): CompletionOption[] {
  return command === root ? root.options : [...command.options, ...globalOptions(root)];
}

/**
 * What to offer at `command` before its first argument: its subcommands, else its first argument's fixed values,
 * else (a command that takes no argument) its options; empty when its arguments are file names or free words.
 */
export function wordsAt(root: CompletionCommand, command: CompletionCommand): string[] {
  if (command.subcommands.length > 0) return command.subcommands.map((sub) => sub.path.at(-1)!);
  if (command.argumentChoices.length > 0) return command.argumentChoices;
  return command.takesArguments ? [] : optionsAt(root, command).flatMap((option) => option.flags);
}

/** Every (command, word) → subcommand step, a word being a subcommand's name or alias. */
export function childSteps(root: CompletionCommand): { parent: string; word: string; child: string }[] {
  return allCommands(root).flatMap((command) =>
    command.subcommands.flatMap((sub) => sub.names.map((word) => ({ parent: keyOf(command), word, child: sub.path.at(-1)! }))),
  );
}

/** A name or flag as it may appear unquoted in the scripts (commander's, checked rather than trusted). */
export function checkedWord(word: string): string {
  if (!/^-{0,2}[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(word)) throw new Error(`cannot complete the command word ${JSON.stringify(word)}`);
  return word;
}

/** The word that identifies a command in the generated scripts: its path joined by spaces ('' for the root). */
export const keyOf = (command: CompletionCommand): string => command.path.join(' ');
