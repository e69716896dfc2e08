/** `sandbox completion bash`: a bash completion script for the command tree (tree.ts). */
import { allCommands, checkedWord, childSteps, keyOf, optionsAt, wordsAt, type CompletionCommand } from './tree.ts';

/** `word` in single quotes, for bash and zsh. */
export const singleQuoted = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * The functions both bash and zsh scripts use: `_sandbox_child PATH WORD` (the subcommand WORD names under PATH, in
 * `_sandbox_found`) and `_sandbox_takes_value PATH FLAG` (FLAG takes the next word as its value).
 */
export function sharedFunctions(root: CompletionCommand): string {
  const steps = childSteps(root).map(
    ({ parent, word, child }) => `    ${singleQuoted(`${parent}/${checkedWord(word)}`)}) _sandbox_found=${checkedWord(child)} ;;`,
  );
  const valueFlags = allCommands(root).flatMap((command) =>
    optionsAt(root, command)
      .filter((option) => option.takesValue)
      .flatMap((option) => option.flags.map((flag) => singleQuoted(`${keyOf(command)}/${checkedWord(flag)}`))),
  );
  return [
    '# The subcommand that WORD (a name or an alias) names under command PATH ("" is sandbox itself), in _sandbox_found.',
    '_sandbox_child() {',
    '  case "$1/$2" in',
    ...steps,
    "    *) _sandbox_found='' ;;",
    '  esac',
    '}',
    '',
    '# Whether option FLAG of command PATH takes the next word as its value.',
    '_sandbox_takes_value() {',
    '  case "$1/$2" in',
    ...(valueFlags.length > 0 ? [`    ${valueFlags.join('|')}) return 0 ;;`] : []),
    '  esac',
    '  return 1',
    '}',
  ].join('\n');
}

/** The loop over the words before the cursor that both scripts run: the command path, a pending option value, the arguments given. */
export function pathLoop(first: string, last: string, wordAt: string): string {
  return [
    `  for ((i = ${first}; i < ${last}; i++)); do`,
    `    word=${wordAt}`,
    '    if [[ -n $value ]]; then value=""; continue; fi',
    '    if [[ $word == -* ]]; then',
    '      if [[ $word != *=* ]] && _sandbox_takes_value "$cmdpath" "$word"; then value=1; fi',
    '      continue',
    '    fi',
    '    _sandbox_child "$cmdpath" "$word"',
    '    if [[ -n $_sandbox_found ]]; then cmdpath=${cmdpath:+$cmdpath }$_sandbox_found; args=0; else args=$((args + 1)); fi',
    '  done',
  ].join('\n');
}

function caseOf(name: string, root: CompletionCommand, entries: (command: CompletionCommand) => string[]): string {
  const arms = allCommands(root)
    .map((command) => [command, entries(command)] as const)
    .filter(([, words]) => words.length > 0)
    .map(([command, words]) => `    ${singleQuoted(keyOf(command))}) _sandbox_found=${singleQuoted(words.map(checkedWord).join(' '))} ;;`);
  return [`${name}() {`, '  case "$1" in', ...arms, "    *) _sandbox_found='' ;;", '  esac', '}'].join('\n');
}

export function bashScript(root: CompletionCommand, version: string): string {
  return [
    `# bash completion for sandbox ${version}, made by \`sandbox completion bash\` from its commands and options.`,
    '# Install for every user:  sandbox completion bash > /etc/bash_completion.d/sandbox',
    '#          or for you:     sandbox completion bash > ~/.local/share/bash-completion/completions/sandbox',
    '#          or in ~/.bashrc: source <(sandbox completion bash)',
    '',
    sharedFunctions(root),
    '',
    '# The words to offer at command PATH before its first argument: subcommands, fixed values or options.',
    caseOf('_sandbox_commands', root, (command) => wordsAt(root, command)),
    '',
    '# The options of command PATH (its own and the global ones).',
    caseOf('_sandbox_options', root, (command) => optionsAt(root, command).flatMap((option) => option.flags)),
    '',
    '_sandbox() {',
    '  local cur=${COMP_WORDS[COMP_CWORD]} word cmdpath="" value="" args=0 i _sandbox_found=""',
    pathLoop('1', 'COMP_CWORD', '${COMP_WORDS[i]}'),
    '  COMPREPLY=()',
    "  # An option's value, or an argument: the shell's own file-name completion (complete -o default).",
    '  [[ -n $value ]] && return 0',
    '  if [[ $cur == -* ]]; then _sandbox_options "$cmdpath"',
    '  elif ((args == 0)); then _sandbox_commands "$cmdpath"',
    '  else return 0',
    '  fi',
    '  COMPREPLY=($(compgen -W "$_sandbox_found" -- "$cur"))',
    '}',
    '',
    'complete -o default -F _sandbox sandbox',
    '',
  ].join('\n');
}
