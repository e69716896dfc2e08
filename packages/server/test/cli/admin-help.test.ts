// test-lane: light (runs the admin command, from its sources, for its help and usage errors only: no store, no server)
/**
 * `sandboxd` explains itself: the top-level help lists every command, each command (and subcommand) has its own
 * help with its arguments and options, and a usage mistake is said on stderr with exit code 2.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SERVER_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// A data dir of its own: a command that got as far as the store would show in it.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-help-'));

function sandboxd(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
    cwd: SERVER_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', SANDBOXD_DATA_DIR: dataDir },
    encoding: 'utf8',
  });
}

describe('sandboxd help and usage errors', () => {
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('--help lists every command; help <command> and <command> --help explain one', () => {
    const top = sandboxd('--help');
    assert.equal(top.status, 0, top.stderr);
    for (const command of ['serve', 'user', 'key', 'cluster', 'node', 'backup', 'restore', 'config', 'help'])
      assert.match(top.stdout, new RegExp(`^  ${command}\\b`, 'm'));
    assert.match(top.stdout, /^ {2}SANDBOXD_DATA_DIR +Directory for the SQLite store/m, 'the settings close the top-level help');
    const restore = sandboxd('help', 'restore');
    assert.equal(restore.status, 0);
    assert.match(restore.stdout, /Usage: sandboxd restore \[options\] <file>/);
    assert.match(restore.stdout, /--force/);
    assert.equal(sandboxd('restore', '--help').stdout, restore.stdout);
    const create = sandboxd('user', 'create', '--help');
    assert.equal(create.status, 0);
    assert.match(create.stdout, /Usage: sandboxd user create \[options\] <username>/);
    for (const option of ['--password <password>', '--password-stdin', '--plan <plan>', '--admin', '--json']) assert.ok(create.stdout.includes(option), option);
    assert.doesNotMatch(create.stdout, /SANDBOXD_DATA_DIR/, 'a command’s help is about the command');
    assert.match(sandboxd('node', 'join', '--help').stdout, /--internal-listen <host:port>/);
    const config = sandboxd('config');
    assert.equal(config.status, 0);
    assert.match(config.stdout, /^SANDBOXD_DATA_DIR +Directory for the SQLite store/m);
  });

  test('an unknown command or option, a missing or extra argument: a clear error and exit 2, nothing done', () => {
    const cases: [string[], RegExp][] = [
      [['usr'], /unknown command 'usr'\n\(Did you mean user\?\)/],
      [['user', 'delete', 'bob'], /unknown command 'delete'/],
      [['user', 'create', 'bob', '--bogus'], /unknown option '--bogus'/],
      [['user', 'create'], /missing required argument 'username'/],
      [['node', 'join', 'a', 'b'], /too many arguments for 'join'/],
    ];
    for (const [args, message] of cases) {
      const result = sandboxd(...args);
      assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.match(result.stderr, /^sandboxd: /);
    }
    const none = sandboxd();
    assert.equal(none.status, 2);
    assert.match(none.stderr, /Usage: sandboxd/);
    assert.deepEqual(fs.readdirSync(dataDir), [], 'no store was opened');
  });
});
