// test-lane: light (no server: the scripts are made by the command and run in the shells installed here)
/**
 * `sandbox completion bash|zsh|fish`: scripts made from the command tree. The bash one is sourced in bash and asked,
 * as bash asks it (COMP_WORDS, COMP_CWORD), to complete commands, subcommands (by alias too), options and argument
 * values, and to leave option values and paths to the shell's file names. zsh and fish are run where installed;
 * every command of `sandbox --help` is in every script.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeHome, runCli, type CliHome } from './run-cli.ts';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

const installed = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

/** Runs `script` in `shell` and answers its stdout (a failure fails the test with its stderr). */
function run(shell: string, args: string[], script: string): string {
  const result = spawnSync(shell, [...args, script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 0, `${shell} failed: ${result.stderr}`);
  return result.stdout;
}

/** The command names (and aliases) listed under "Commands:" in a help text. */
function commandsOf(help: string): string[] {
  const section = help.slice(help.indexOf('\nCommands:\n'));
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)(?:\|([a-z-]+))?/gm)].flatMap((m) => (m[2] ? [m[1]!, m[2]] : [m[1]!]));
}

describe('sandbox completion', () => {
  let home: CliHome;
  const files: Partial<Record<Shell, string>> = {};
  let topLevel: string[];

  before(async () => {
    home = makeHome('http://127.0.0.1:9');
    for (const shell of SHELLS) {
      const made = await runCli(['completion', shell], home.env());
      assert.equal(made.code, 0, made.stderr);
      files[shell] = path.join(home.home, `sandbox.${shell}`);
      fs.writeFileSync(files[shell]!, made.stdout);
    }
    topLevel = commandsOf((await runCli(['--help'], home.env())).stdout);
  });
  after(() => home.remove());

  test('bash: commands, subcommands (an alias too), options and argument values complete; paths are left to bash', async () => {
    const cases: [string[], string][] = [
      [['sandbox', 'fi'], 'files'],
      [['sandbox', 'files', ''], 'ls stat mkdir rm mv watch help'],
      [['sandbox', 'files', 'm'], 'mkdir mv'],
      [['sandbox', '--url', 'http://x', 'fil'], 'files'],
      [['sandbox', 'templates', 'b'], 'build'],
      [['sandbox', 'template', 'build', '--na'], '--name'],
      [['sandbox', '--json', 'files', 'ls', '--d'], '--depth'],
      [['sandbox', 'download', '--no-'], '--no-progress'],
      [['sandbox', 'completion', ''], 'bash zsh fish'],
      // The value of -s, a path argument, a second argument: the shell's file names (complete -o default).
      [['sandbox', 'files', 'ls', '-s', ''], ''],
      [['sandbox', 'upload', ''], ''],
      [['sandbox', 'completion', 'bash', ''], ''],
    ];
    const script = [
      `source ${files.bash}`,
      'complete -p sandbox',
      ...cases.map(
        ([words]) => `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _sandbox; echo "=> \${COMPREPLY[*]}"`,
      ),
    ].join('\n');
    const [registered, ...answers] = run('bash', ['--norc', '--noprofile', '-c'], script).replace(/\n$/, '').split('\n');
    assert.equal(registered, 'complete -o default -F _sandbox sandbox');
    assert.deepEqual(
      answers,
      cases.map(([, expected]) => `=> ${expected}`),
    );
    // The subcommands offered are those `sandbox files --help` lists.
    const filesHelp = await runCli(['files', '--help'], home.env());
    assert.deepEqual(commandsOf(filesHelp.stdout).sort(), ['help', 'ls', 'mkdir', 'mv', 'rm', 'stat', 'watch']);
  });

  test('every command of `sandbox --help` is in each script', () => {
    assert.ok(topLevel.length >= 30 && topLevel.includes('completion') && topLevel.includes('processes'), topLevel.join(' '));
    for (const shell of SHELLS) {
      const script = fs.readFileSync(files[shell]!, 'utf8');
      for (const name of topLevel) assert.ok(script.includes(`/${name}'`), `${shell}: ${name}`);
    }
  });

  test('zsh, where installed: the script parses and completes as bash does', { skip: !installed('zsh') && 'zsh is not installed' }, () => {
    run('zsh', ['-n'], files.zsh!);
    // Outside a completion widget: compdef, _describe and _files stand in for zsh's own, printing what is offered.
    const script = [
      'compdef() { :; }',
      `source ${files.zsh}`,
      '_describe() { local -a e; e=("${(@P)4}"); print -r -- "${(j: :)${e[@]%%:*}}"; }',
      "_files() { print -r -- '<files>'; }",
      't() { words=("$@"); CURRENT=${#words}; PREFIX=${words[CURRENT]}; _sandbox; }',
      't sandbox files ""',
      't sandbox templates ""',
      't sandbox upload ""',
      't sandbox completion ""',
    ].join('\n');
    assert.deepEqual(run('zsh', ['-f', '-c'], script).trimEnd().split('\n'), [
      'ls stat mkdir rm mv watch help',
      'build ls logs rm help',
      '<files>',
      'bash zsh fish',
    ]);
  });

  test('fish, where installed: the script parses and completes as bash does', { skip: !installed('fish') && 'fish is not installed' }, () => {
    run('fish', ['-n'], files.fish!);
    const lines = ['sandbox fi', 'sandbox files ', 'sandbox processes ', 'sandbox template build --na', 'sandbox completion '];
    const script = [`source ${files.fish}`, ...lines.map((line) => `echo (complete -C '${line}' | string split -f1 \\t | sort | string join ' ')`)].join('\n');
    assert.deepEqual(run('fish', ['--no-config', '-c'], script).trimEnd().split('\n'), [
      'files',
      'help ls mkdir mv rm stat watch',
      'help kill logs ls signal start',
      '--name',
      'bash fish zsh',
    ]);
  });

  test('--json wraps the script; an unknown shell is a usage mistake; --help says how to install', async () => {
    const json = await runCli(['--json', 'completion', 'fish'], home.env());
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.json.shell, 'fish');
    assert.equal(json.json.script, fs.readFileSync(files.fish!, 'utf8'));
    assert.match(json.json.install, /~\/\.config\/fish\/completions\/sandbox\.fish/);
    const bad = await runCli(['completion', 'tcsh'], home.env());
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /bash, zsh, fish/);
    const help = await runCli(['completion', '--help'], home.env());
    assert.match(help.stdout, /sandbox completion bash > \/etc\/bash_completion\.d\/sandbox/);
    assert.match(help.stdout, /source <\(sandbox completion zsh\)/);
  });
});
