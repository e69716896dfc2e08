// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * `sandbox vault` as a user runs it (a child process), against the real server (no VM needed): create with
 * secrets whose values come from an environment variable and from standard input (and an injection point), ls, show, set, logs, unset,
 * rm, and `sandbox create --vault`; no output of any command ever carries a value.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { makeHome, runCli, type CliHome, type CliResult } from './run-cli.ts';

const FROM_ENV = 'sk-live-cli-env-value-3Hx8';
const FROM_STDIN = 'sk-live-cli-stdin-value-9Wq1';
const ROTATED = 'sk-live-cli-rotated-value-5Np4';
const VALUES = [FROM_ENV, FROM_STDIN, ROTATED];

describe('sandbox vault', () => {
  let server: TestServer;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;
  const outputs: CliResult[] = [];

  /** Runs the command and keeps its output for the check that no value is ever printed. */
  async function cli(args: string[], extraEnv: Record<string, string> = {}, input?: string): Promise<CliResult> {
    const result = await runCli(args, { ...env, ...extraEnv }, input);
    outputs.push(result);
    return result;
  }

  before(async () => {
    server = await startTestServer();
    const vic = await server.createUserWithKey('vic');
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: vic.apiKey });
  });
  after(async () => {
    home?.remove();
    await server?.close();
  });

  test('create (values from env and stdin), ls, show, set, logs, unset, rm; no value is ever printed', async () => {
    const created = await cli(
      [
        'vault',
        'create',
        'ci',
        '-d',
        'CI tokens',
        '--secret',
        'API_TOKEN',
        '--host',
        'api.example.com',
        '--value-env',
        'MY_TOKEN',
        '--secret',
        'DEPLOY_KEY',
        '--host',
        'deploy.example.com',
        '--host',
        '*.example.org',
        '--inject',
        'header:X-Deploy-Key',
        '--value-stdin',
      ],
      { MY_TOKEN: FROM_ENV },
      `${FROM_STDIN}\n`,
    );
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    assert.match(id, /^vlt_\S+$/);
    assert.match(created.stderr, /API_TOKEN \(api\.example\.com\), DEPLOY_KEY \(deploy\.example\.com, \*\.example\.org\)/);
    assert.match(created.stderr, new RegExp(`sandbox create --vault ${id}`));

    const listed = await cli(['--json', 'vault', 'ls']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      listed.json.map((v: { id: string; name: string }) => [v.id, v.name]),
      [[id, 'ci']],
    );
    const text = await cli(['vault', 'ls']);
    assert.match(text.stdout, /^ID\s+NAME\s+SECRETS\s+CREATED\s+DESCRIPTION/);
    assert.match(text.stdout, new RegExp(`${id}\\s+ci\\s+API_TOKEN, DEPLOY_KEY\\s+\\S+\\s+CI tokens`));

    const shown = await cli(['vault', 'show', id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /name:\s+ci/);
    assert.match(shown.stdout, /API_TOKEN\s+api\.example\.com\s+Authorization: Bearer/);
    assert.match(shown.stdout, /DEPLOY_KEY\s+deploy\.example\.com, \*\.example\.org\s+X-Deploy-Key/);

    const rotated = await cli(['vault', 'set', id, 'API_TOKEN', '--host', 'api.example.com', '--host', 'api2.example.com', '--value-stdin'], {}, ROTATED);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /Secret API_TOKEN set in vault vlt_\S+ \(hosts: api\.example\.com, api2\.example\.com; injected as Authorization: Bearer\)/);
    const added = await cli(
      ['--json', 'vault', 'set', id, 'EXTRA', '--host', 'x.example.com', '--value-env', 'EXTRA_VALUE', '--inject', 'header:Authorization:token '],
      { EXTRA_VALUE: FROM_ENV },
    );
    assert.equal(added.code, 0, added.stderr);
    assert.deepEqual(
      [added.json.name, added.json.allowed_hosts, added.json.inject],
      ['EXTRA', ['x.example.com'], { type: 'header', name: 'Authorization', prefix: 'token ' }],
    );
    const badInject = await cli(['vault', 'set', id, 'EXTRA', '--host', 'x.example.com', '--value-env', 'EXTRA_VALUE', '--inject', 'cookie'], {
      EXTRA_VALUE: FROM_ENV,
    });
    assert.equal(badInject.code, 2);
    assert.match(badInject.stderr, /--inject cookie: give bearer, basic, header:NAME or header:NAME:PREFIX/);

    const noValue = await cli(['vault', 'set', id, 'EXTRA', '--host', 'x.example.com']);
    assert.equal(noValue.code, 2);
    assert.match(noValue.stderr, /--value-env VAR or --value-stdin/);
    const unsetVar = await cli(['vault', 'set', id, 'EXTRA', '--host', 'x.example.com', '--value-env', 'NOT_SET_ANYWHERE']);
    assert.equal(unsetVar.code, 2);
    assert.match(unsetVar.stderr, /NOT_SET_ANYWHERE .* not set or empty/);

    const logs = await cli(['vault', 'logs', id, '--flagged', '--vm', 'vm-nothing', '--limit', '5']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /No requests logged\./);
    const logsJson = await cli(['--json', 'vault', 'logs', id, '--substituted']);
    assert.deepEqual(logsJson.json, { items: [], next_cursor: null });
    assert.equal((await cli(['vault', 'logs', id, '--flagged', '--substituted'])).code, 2);

    const unset = await cli(['vault', 'unset', id, 'EXTRA']);
    assert.equal(unset.code, 0, unset.stderr);
    assert.match(unset.stdout, /Secret EXTRA deleted from vault/);
    assert.equal((await cli(['vault', 'unset', id, 'EXTRA'])).code, 4, 'not found');
    const after = await cli(['--json', 'vault', 'show', id]);
    assert.deepEqual(after.json.secrets.map((s: { name: string }) => s.name).sort(), ['API_TOKEN', 'DEPLOY_KEY']);

    const removed = await cli(['vault', 'rm', id]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, new RegExp(`Vault ${id} deleted`));
    assert.equal((await cli(['vault', 'show', id])).code, 4, 'not found');
    assert.match((await cli(['vault', 'ls'])).stdout, /No vaults\./);

    assert.ok(outputs.length > 15);
    for (const { stdout, stderr } of outputs) {
      for (const value of VALUES) assert.ok(!stdout.includes(value) && !stderr.includes(value), `a value was printed:\n${stdout}\n${stderr}`);
    }
  });

  test('usage mistakes exit 2 with the reason; sandbox create --vault sends the vault', async () => {
    const orphanHost = await cli(['vault', 'create', 'x', '--host', 'api.example.com', '--secret', 'A']);
    assert.equal(orphanHost.code, 2);
    assert.match(orphanHost.stderr, /--host api\.example\.com belongs to a secret: put it after --secret NAME/);
    const noHost = await cli(['vault', 'create', 'x', '--secret', 'A', '--value-env', 'V'], { V: FROM_ENV });
    assert.equal(noHost.code, 2);
    assert.match(noHost.stderr, /--secret A needs at least one --host/);
    const twoFromStdin = await cli(
      ['vault', 'create', 'x', '--secret', 'A', '--host', 'a.example.com', '--secret', 'B', '--host', 'b.example.com', '--value-stdin'],
      {},
      FROM_STDIN,
    );
    assert.equal(twoFromStdin.code, 2);
    assert.match(twoFromStdin.stderr, /--value-stdin gives one value, but 2 secrets have no --value-env/);
    const emptyValue = await cli(['vault', 'set', 'vlt_nothing', 'A', '--host', 'a.example.com', '--value-stdin'], {}, '');
    assert.equal(emptyValue.code, 2);
    assert.match(emptyValue.stderr, /the value of A is empty/);

    const empty = await cli(['vault', 'create', 'empty']);
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stderr, /secrets: none yet/);
    const shown = await cli(['vault', 'show', empty.stdout.trim()]);
    assert.match(shown.stdout, /No secrets\. Add one with `sandbox vault set vlt_\S+ NAME --host HOST --value-env VAR`/);

    // An unknown vault: not found (exit 4), or unavailable (6) on a server without egress enforcement.
    const attached = await cli(['create', '--vault', 'vlt_nothing']);
    assert.equal(attached.code, server.services.sandbox.egress.enforces ? 4 : 6, attached.stderr);
    assert.match(attached.stderr, /vault/i);
  });
});
