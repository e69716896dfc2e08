/** `sandbox completion zsh`: a zsh completion function for the command tree (tree.ts), with descriptions. */
import { pathLoop, sharedFunctions, singleQuoted } from './bash.ts';
import { allCommands, checkedWord, keyOf, optionsAt, wordsAt, type CompletionCommand, type CompletionOption } from './tree.ts';

/** A `_describe` entry: `word:description` (a colon in the word would end it early; words are checked to have none). */
const entry = (word: string, description: string) => singleQuoted(`${checkedWord(word)}:${description.replace(/\s+/g, ' ').trim()}`);

const optionEntries = (options: CompletionOption[]) => options.flatMap((option) => option.flags.map((flag) => entry(flag, option.description)));

function caseOf(name: string, root: CompletionCommand, entries: (command: CompletionCommand) => string[]): string {
  const arms = allCommands(root)
    .map((command) => [command, entries(command)] as const)
    .filter(([, list]) => list.length > 0)
    .map(([command, list]) => `    ${singleQuoted(keyOf(command))}) _sandbox_entries=(\n      ${list.join('\n      ')}\n    ) ;;`);
  return [`${name}() {`, '  case "$1" in', ...arms, '    *) _sandbox_entries=() ;;', '  esac', '}'].join('\n');
}

/** The entries to offer at a command before its first argument (as `wordsAt`), each with its description. */
function commandEntries(root: CompletionCommand, command: CompletionCommand): string[] {
  if (command.subcommands.length > 0) return command.subcommands.map((sub) => entry(sub.path.at(-1)!, sub.description));
  if (command.argumentChoices.length > 0) return command.argumentChoices.map((choice) => entry(choice, ''));
  return wordsAt(root, command).length > 0 ? optionEntries(optionsAt(root, command)) : [];
}

export function zshScript(root: CompletionCommand, version: string): string {
  return [
    '#compdef sandbox',
    `# zsh completion for sandbox ${version}, made by \`sandbox completion zsh\` from its commands and options.`,
    '# Install: in ~/.zshrc, after compinit:  source <(sandbox completion zsh)',
    '#      or: sandbox completion zsh > "${fpath[1]}/_sandbox"   (a directory of your fpath; then start a new zsh)',
    '',
    sharedFunctions(root),
    '',
    '# word:description entries to offer at command PATH before its first argument: subcommands, fixed values or options.',
    caseOf('_sandbox_commands', root, (command) => commandEntries(root, command)),
    '',
    '# word:description entries of the options of command PATH (its own and the global ones).',
    caseOf('_sandbox_options', root, (command) => optionEntries(optionsAt(root, command))),
    '',
    '_sandbox() {',
    '  local word cmdpath="" value="" args=0 i _sandbox_found=""',
    '  local -a _sandbox_entries',
    pathLoop('2', 'CURRENT', '${words[i]}'),
    '  if [[ -n $value ]]; then _files; return; fi',
    '  if [[ $PREFIX == -* ]]; then',
    '    _sandbox_options "$cmdpath"',
    '    _describe -t options option _sandbox_entries',
    '    return',
    '  fi',
    '  if ((args == 0)); then',
    '    _sandbox_commands "$cmdpath"',
    '    if ((${#_sandbox_entries})); then _describe -t commands command _sandbox_entries; return; fi',
    '  fi',
    '  _files',
    '}',
    '',
    '# Autoloaded from fpath, this file is the body of _sandbox: run it; sourced, register it.',
    'if [[ ${funcstack[1]} == _sandbox ]]; then _sandbox "$@"; else compdef _sandbox sandbox; fi',
    '',
  ].join('\n');
}
