// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * The `sandbox` command as a user runs it (a child process with its own HOME), against the real server:
 * login through the device flow approved over HTTP, the stored credentials, the commands that need no VM,
 * `--json` output, exit codes and the messages of each error class.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { BIN, makeHome, runCli, startCli, waitFor, type CliHome } from './run-cli.ts';

const USER_CODE = /confirm the code ([A-Z]{4}-[A-Z]{4})/;

/** Real time plus an offset the test can move (for expiry). */
function movableClock() {
  let offsetMs = 0;
  return { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => (offsetMs += ms) };
}

describe('sandbox (command-line tool)', () => {
  let server: TestServer;
  let dave: { userId: number; apiKey: string; password: string };
  let home: CliHome;
  const clock = movableClock();

  before(async () => {
    server = await startTestServer({ clock, config: { cliAuthIntervalSeconds: 1, cliAuthTtlSeconds: 120 } });
    dave = await server.createUserWithKey('dave', 'pro');
    home = makeHome(server.baseUrl);
  });
  after(async () => {
    home.remove();
    await server.close();
  });

  /** Approves a user code over HTTP as dave, signed in with a bearer token. */
  async function approveAsDave(userCode: string, deny = false) {
    const token = await call(server, 'POST', '/v1/auth/token', { form: { username: 'dave', password: dave.password } });
    const res = await call(server, 'POST', '/api/cli-auth/approve', {
      bearer: token.body.access_token,
      json: { user_code: userCode, ...(deny ? { deny: true } : {}) },
    });
    assert.equal(res.status, 200, res.text);
  }

  test('the set-up installed `sandbox` on PATH, and it talks to the server', async () => {
    // `npm start`/`npm test` link npm's global bin/sandbox to a clone's bin/sandbox.mjs (scripts/setup.mjs).
    const res = await runCli(['--json', 'keys', 'ls'], home.env({ SANDBOXD_API_KEY: dave.apiKey }), undefined, ['sandbox']);
    assert.equal(res.code, 0, `${res.stderr} (is it on PATH? node scripts/setup.mjs installs it)`);
    assert.ok(
      res.json.some((k: { description: string }) => k.description === 'test key of dave'),
      res.stdout,
    );
  });

  test('--version, --help and usage mistakes', async () => {
    const version = await runCli(['--version'], home.env());
    assert.equal(version.code, 0);
    assert.equal(version.stdout.trim(), '0.3.0');
    // The entry point runs the compiled command, with no tsx: the package's dependencies do not have it.
    const pkg = JSON.parse(fs.readFileSync(path.join(path.dirname(BIN), '..', 'package.json'), 'utf8'));
    assert.equal(version.stdout.trim(), pkg.version);
    assert.equal(pkg.dependencies.tsx, undefined);
    assert.doesNotMatch(fs.readFileSync(BIN, 'utf8'), /['"]tsx(\/[^'"]*)?['"]/, 'bin/sandbox.mjs imports no tsx');
    const help = await runCli(['--help'], home.env());
    assert.equal(help.code, 0);
    for (const command of ['login', 'logout', 'whoami', 'create', 'exec', 'run', 'upload', 'download', 'ls', 'status', 'kill', 'url', 'shell', 'keys']) {
      assert.match(help.stdout, new RegExp(`\\n  ${command}\\b`), command);
    }
    assert.equal((await runCli(['frobnicate'], home.env())).code, 2);
    const badLanguage = await runCli(['exec', '--language', 'ruby', 'puts 1'], home.env());
    assert.equal(badLanguage.code, 2);
    assert.match(badLanguage.stderr, /python, bash, node/);
    const noSession = await runCli(['upload', '/etc/hostname', '/tmp/x'], home.env({ SANDBOXD_API_KEY: dave.apiKey }));
    assert.equal(noSession.code, 2);
    assert.match(noSession.stderr, /sandbox create/);
  });

  test('before login: 401 says to run `sandbox login` (exit 3), also as JSON', async () => {
    const res = await runCli(['ls'], home.env());
    assert.equal(res.code, 3);
    assert.match(res.stderr, /sandbox login/);
    const json = await runCli(['--json', 'keys', 'ls'], home.env());
    assert.equal(json.code, 3);
    const error = JSON.parse(json.stderr.trim()).error;
    assert.equal(error.type, 'AuthenticationError');
    assert.equal(error.status, 401);
    assert.equal(error.exit_code, 3);
    assert.equal(json.stdout, '');
  });

  test('SANDBOXD_API_KEY works without a login', async () => {
    const res = await runCli(['--json', 'keys', 'ls'], home.env({ SANDBOXD_API_KEY: dave.apiKey }));
    assert.equal(res.code, 0, res.stderr);
    assert.ok(res.json.some((k: any) => k.description === 'test key of dave'));
  });

  describe('after `sandbox login`', () => {
    let login: any;

    before(async () => {
      const running = startCli(['login', '--no-browser', '--json', '--hostname', 'cli-test-host'], home.env());
      const [, userCode] = await waitFor(running.stderrSoFar, USER_CODE);
      assert.match(running.stderrSoFar(), new RegExp(`${server.baseUrl}/cli-login\\?user_code=${userCode}`));
      await new Promise((r) => setTimeout(r, 1500)); // let it poll while pending at least once
      await approveAsDave(userCode!);
      const result = await running.done;
      assert.equal(result.code, 0, result.stderr);
      login = result.json;
      // The prefix is shown; the key itself never is.
      assert.doesNotMatch(result.stdout + result.stderr, /sbx_sk_[A-Za-z0-9_-]{20,}/);
    });

    test('login stored a key labelled "CLI - <hostname>" in a 0600 file', async () => {
      assert.equal(login.logged_in, true);
      assert.equal(login.username, 'dave');
      assert.equal(login.description, 'CLI - cli-test-host');
      const file = path.join(home.configHome, 'sandboxd', 'credentials.json');
      assert.equal(login.credentials_file, file);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
      const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
      assert.equal(stored.default_url, server.baseUrl);
      const entry = stored.servers[server.baseUrl];
      assert.match(entry.api_key, /^sbx_sk_/);
      assert.equal(entry.key_prefix, login.key_prefix);
      const works = await call(server, 'GET', '/v1/api-keys/', { apiKey: entry.api_key });
      assert.equal(works.status, 200);
    });

    test('whoami and keys ls use the stored key', async () => {
      const who = await runCli(['--json', 'whoami'], home.env());
      assert.equal(who.code, 0, who.stderr);
      assert.deepEqual(
        { username: who.json.username, user_id: who.json.user_id, key_source: who.json.key_source, base_url: who.json.base_url },
        { username: 'dave', user_id: dave.userId, key_source: 'credentials', base_url: server.baseUrl },
      );
      const text = await runCli(['whoami'], home.env());
      assert.match(text.stdout, /user:\s+dave/);
      const keys = await runCli(['--json', 'keys', 'ls'], home.env());
      assert.ok(keys.json.some((k: any) => k.description === 'CLI - cli-test-host'));
      const table = await runCli(['keys', 'ls'], home.env());
      assert.match(table.stdout, /^ID\s+PREFIX/);
      assert.match(table.stdout, /CLI - cli-test-host/);
    });

    test("without SANDBOXD_URL the last login's server is used", async () => {
      const env = home.env();
      delete env.SANDBOXD_URL;
      const res = await runCli(['--json', 'whoami'], env);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.json.base_url, server.baseUrl);
    });

    test('create prints the session id (JSON: the whole record) and makes it current', async () => {
      const plain = await runCli(['create', '--vcpus', '1'], home.env());
      assert.equal(plain.code, 0, plain.stderr);
      assert.match(plain.stdout.trim(), /^[0-9a-f-]{36}$/);
      const json = await runCli(
        ['--json', 'create', '--vcpus', '1', '--memory', '256', '--lifetime', '60', '--metadata', 'team=cli', '--env', 'MODE=x'],
        home.env(),
      );
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(
        { vcpu: json.json.vcpu_count, memory: json.json.memory_mb, lifetime: json.json.vm_lifetime_seconds, metadata: json.json.metadata },
        { vcpu: 1, memory: 256, lifetime: 60, metadata: { team: 'cli' } },
      );
      const status = await runCli(['--json', 'status'], home.env());
      assert.equal(status.code, 0, status.stderr);
      assert.equal(status.json.session_id, json.json.session_id, 'status without an id uses the current session');
      assert.equal(status.json.vm_assigned, false);
      const bad = await runCli(['create', '--vcpus', '3'], home.env());
      assert.equal(bad.code, 2);
    });

    test('create --pre-stop gives the session a pre-stop hook its VMs inherit', async () => {
      const json = await runCli(['--json', 'create', '--vcpus', '1', '--pre-stop', 'sync; echo "bye $HOSTNAME"', '--pre-stop-timeout', '5'], home.env());
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(json.json.lifecycle_hooks, { pre_stop: { command: 'sync; echo "bye $HOSTNAME"', timeout_seconds: 5 } });
      const defaults = await runCli(['--json', 'create', '--vcpus', '1', '--pre-stop', 'sync'], home.env());
      assert.equal(defaults.json.lifecycle_hooks.pre_stop.timeout_seconds, 30);
      assert.equal((await runCli(['create', '--pre-stop-timeout', '5'], home.env())).code, 2, '--pre-stop-timeout needs --pre-stop');
      assert.equal((await runCli(['create', '--pre-stop', 'sync', '--pre-stop-timeout', '121'], home.env())).code, 2);
    });

    test('ls lists sandboxes with a metadata filter (none without a VM)', async () => {
      const res = await runCli(['--json', 'ls', '--metadata', 'team=cli'], home.env());
      assert.equal(res.code, 0, res.stderr);
      assert.deepEqual(res.json, []);
      const text = await runCli(['ls'], home.env());
      assert.equal(text.stdout.trim(), 'No sandboxes.');
    });

    test('kill without a VM, and exec in an unknown session, are session errors (exit 4)', async () => {
      const kill = await runCli(['kill'], home.env());
      assert.equal(kill.code, 4);
      assert.match(kill.stderr, /no running VM/);
      const exec = await runCli(['--json', 'exec', '--session', '00000000-0000-4000-8000-000000000000', 'print(1)'], home.env());
      assert.equal(exec.code, 4);
      assert.equal(JSON.parse(exec.stderr.trim()).error.type, 'SessionError');
    });

    test('url of a session without a VM is a session error (exit 4) that says how to start one', async () => {
      const res = await runCli(['url', '3000'], home.env());
      assert.equal(res.code, 4);
      assert.match(res.stderr, /has no VM yet/);
      const bad = await runCli(['url', '70000'], home.env());
      assert.equal(bad.code, 2);
    });

    test('keys create prints the new key once; keys rm deletes it', async () => {
      const created = await runCli(['--json', 'keys', 'create', '--description', 'from the cli'], home.env());
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.json.full_key, /^sbx_sk_/);
      const plain = await runCli(['keys', 'create'], home.env());
      assert.match(plain.stdout.trim(), /^sbx_sk_\S+$/);
      const removed = await runCli(['--json', 'keys', 'rm', String(created.json.id)], home.env());
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(removed.json.deleted, true);
      const gone = await call(server, 'GET', '/v1/api-keys/', { apiKey: created.json.full_key });
      assert.equal(gone.status, 401);
      const missing = await runCli(['keys', 'rm', '999999'], home.env());
      assert.equal(missing.code, 4);
    });

    test('logout deletes the key on the server and forgets it', async () => {
      const stored = JSON.parse(fs.readFileSync(path.join(home.configHome, 'sandboxd', 'credentials.json'), 'utf8')).servers[server.baseUrl];
      const res = await runCli(['--json', 'logout'], home.env());
      assert.equal(res.code, 0, res.stderr);
      assert.deepEqual({ logged_out: res.json.logged_out, key_deleted: res.json.key_deleted }, { logged_out: true, key_deleted: true });
      const after = JSON.parse(fs.readFileSync(path.join(home.configHome, 'sandboxd', 'credentials.json'), 'utf8'));
      assert.equal(after.servers[server.baseUrl], undefined);
      assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: stored.api_key })).status, 401, 'the key no longer works');
      const who = await runCli(['whoami'], home.env());
      assert.equal(who.code, 3);
      assert.match(who.stderr, /sandbox login/);
    });
  });

  test('a login denied in the browser ends with a clear message', async () => {
    const running = startCli(['login', '--no-browser'], home.env());
    const [, userCode] = await waitFor(running.stderrSoFar, USER_CODE);
    await approveAsDave(userCode!, true);
    const result = await running.done;
    assert.equal(result.code, 1);
    assert.match(result.stderr, /denied/);
  });

  test('a login that expires before approval ends with a clear message', async () => {
    const running = startCli(['login', '--no-browser', '--json'], home.env());
    await waitFor(running.stderrSoFar, USER_CODE);
    clock.advance(121_000);
    const result = await running.done;
    assert.equal(result.code, 1);
    assert.equal(JSON.parse(result.stderr.trim().split('\n').pop()!).error.code, 'CLI_AUTH_EXPIRED');
    assert.match(result.stderr, /expired/);
  });
});
