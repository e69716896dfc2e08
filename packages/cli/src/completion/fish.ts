/** `sandbox completion fish`: fish completions for the command tree (tree.ts), with descriptions. */
import { allCommands, checkedWord, childSteps, keyOf, optionsAt, globalOptions, type CompletionCommand, type CompletionOption } from './tree.ts';

/** `text` in fish's single quotes (where only \\ and ' are special). */
const quoted = (text: string) => `'${text.replace(/\s+/g, ' ').trim().replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** A `complete` line for an option, under `condition` (none: everywhere). */
function optionLine(option: CompletionOption, condition: string | null): string {
  const flags = option.flags.map((flag) => (flag.startsWith('--') ? `-l ${checkedWord(flag.slice(2))}` : `-s ${checkedWord(flag.slice(1))}`));
  // A value: required, and file names offered for it (most values here are paths; the rest are free words).
  return `complete -c sandbox${condition ? ` -n ${quoted(condition)}` : ''} ${flags.join(' ')}${option.takesValue ? ' -r -F' : ''} -d ${quoted(option.description)}`;
}

export function fishScript(root: CompletionCommand, version: string): string {
  const steps = childSteps(root);
  const valueFlags = allCommands(root).flatMap((command) =>
    optionsAt(root, command)
      .filter((option) => option.takesValue)
      .flatMap((option) => option.flags.map((flag) => quoted(`${keyOf(command)}/${checkedWord(flag)}`))),
  );
  const lines: string[] = [
    `# fish completion for sandbox ${version}, made by \`sandbox completion fish\` from its commands and options.`,
    '# Install: sandbox completion fish > ~/.config/fish/completions/sandbox.fish',
    '',
    '# The subcommand that WORD (a name or an alias) names under command PATH ("" is sandbox itself).',
    'function __sandbox_child --argument-names cmdpath word',
    '    switch "$cmdpath/$word"',
    ...steps.flatMap(({ parent, word, child }) => [`        case ${quoted(`${parent}/${checkedWord(word)}`)}`, `            echo ${checkedWord(child)}`]),
    '    end',
    'end',
    '',
    '# Whether option FLAG of command PATH takes the next word as its value.',
    'function __sandbox_takes_value --argument-names cmdpath flag',
    '    switch "$cmdpath/$flag"',
    ...(valueFlags.length > 0 ? [`        case ${valueFlags.join(' ')}`, '            return 0'] : []),
    '    end',
    '    return 1',
    'end',
    '',
    '# Whether the command line so far is at command PATH; with "start", also before its first argument.',
    'function __sandbox_at --argument-names want start',
    '    set -l cmdpath ""',
    '    set -l value 0',
    '    set -l args 0',
    '    set -l words (commandline -opc)',
    '    set -e words[1]',
    '    for word in $words',
    '        if test $value = 1',
    '            set value 0',
    '            continue',
    '        end',
    "        if string match -q -- '-*' $word",
    '            if not string match -q -- \'*=*\' $word; and __sandbox_takes_value "$cmdpath" $word',
    '                set value 1',
    '            end',
    '            continue',
    '        end',
    '        set -l child (__sandbox_child "$cmdpath" $word)',
    '        if test -n "$child"',
    '            set cmdpath (string trim -- "$cmdpath $child")',
    '            set args 0',
    '        else',
    '            set args (math $args + 1)',
    '        end',
    '    end',
    '    test "$cmdpath" = "$want"; or return 1',
    '    test "$start" != start; or test $args = 0',
    'end',
    '',
    '# File names only where a command takes arguments (below).',
    'complete -c sandbox -f',
  ];
  for (const option of root.options) {
    const global = globalOptions(root).includes(option) || option.flags.includes('--help');
    lines.push(optionLine(option, global ? null : '__sandbox_at ""'));
  }
  for (const command of allCommands(root)) {
    const at = keyOf(command);
    // Offered by name (an alias is followed when typed, not offered).
    for (const sub of command.subcommands)
      lines.push(`complete -c sandbox -n ${quoted(`__sandbox_at '${at}' start`)} -a ${checkedWord(sub.path.at(-1)!)} -d ${quoted(sub.description)}`);
    if (command === root) continue;
    for (const choice of command.argumentChoices) lines.push(`complete -c sandbox -n ${quoted(`__sandbox_at '${at}' start`)} -a ${checkedWord(choice)}`);
    for (const option of command.options) if (!option.flags.includes('--help')) lines.push(optionLine(option, `__sandbox_at '${at}'`));
    if (command.takesArguments && command.argumentChoices.length === 0 && command.subcommands.length === 0)
      lines.push(`complete -c sandbox -n ${quoted(`__sandbox_at '${at}'`)} -F`);
  }
  return `${lines.join('\n')}\n`;
}
