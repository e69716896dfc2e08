// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * `sandbox template` as a user runs it (a child process) against the real server: a build whose registry the
 * server refuses (a private address) fails at once, so the whole command flow runs without a VM: build prints the
 * log (with --progress: its step) and exits 1 with the reason, ls shows where it failed, logs prints the log, rm deletes it by name. A real
 * build on real VMs is in the server's test/templates.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { makeHome, runCli, type CliHome } from './run-cli.ts';

describe('sandbox template', () => {
  let server: TestServer;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await startTestServer();
    const tess = await server.createUserWithKey('tess');
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: tess.apiKey });
  });
  after(async () => {
    home?.remove();
    await server?.close();
  });

  test('usage mistakes exit 2 before any request', async () => {
    assert.equal((await runCli(['template', 'build', '--name', 'x'], env)).code, 2, 'no --image');
    const branch = await runCli(['template', 'build', '--name', 'x', '--image', 'example.com/a/b:1', '--branch', 'main'], env);
    assert.equal(branch.code, 2);
    assert.match(branch.stderr, /--branch needs --git/);
    const auth = await runCli(['template', 'build', '--name', 'x', '--image', 'example.com/a/b:1', '--registry-user', 'me'], env);
    assert.equal(auth.code, 2);
    assert.match(auth.stderr, /SANDBOXD_REGISTRY_PASSWORD/);
  });

  test("a bad image reference is the server's 400, said plainly", async () => {
    const bad = await runCli(['template', 'build', '--name', 'x', '--image', 'example.com/Upper/b:1'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /oci_image: invalid image reference/);
  });

  test('build follows the log and exits 1 with the reason; ls, logs and rm by name', async () => {
    const built = await runCli(
      [
        'template',
        'build',
        '--progress',
        '--name',
        'refused',
        '--image',
        '127.0.0.1:9/team/app:1',
        '--run',
        'echo one',
        '--run',
        'echo two',
        '--env',
        'TOKEN=t0ken',
      ],
      env,
    );
    assert.equal(built.code, 1, built.stderr);
    // --progress on a pipe: a plain line for the step, after the log lines, and one for how it ended.
    assert.match(built.stderr, /^refused {2}step 1\/9 resolve {2}\d+s$/m);
    assert.match(
      built.stderr,
      /build failed at resolve: [^\n]*\n(refused {2}step 1\/9 resolve {2}\d+s\n)?refused {2}failed at step 1\/9 resolve after \d+s\n$/,
    );
    assert.ok(!built.stderr.includes('\r'), 'no carriage returns off a terminal');
    assert.match(built.stderr, /Building template refused \(tpl_[a-z2-7]{16}\) from 127\.0\.0\.1:9\/team\/app:1/);
    assert.match(built.stderr, /build failed at resolve: the registry 127\.0\.0\.1:9 cannot be used: .*SANDBOXD_TEMPLATE_REGISTRY_ALLOW_PRIVATE/);
    assert.match(built.stdout, /Template refused \(tpl_[a-z2-7]{16}\) failed: resolve: /);
    assert.ok(!built.stdout.includes('t0ken') && !built.stderr.includes('t0ken'));

    const listed = await runCli(['--json', 'template', 'ls'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const record = listed.json.find((t: { name: string }) => t.name === 'refused');
    assert.deepEqual(
      [listed.json[0].template_id, record.status, record.build_args.post_build_cmd, record.build_args.env_names],
      ['default', 'failed', 'set -e\necho one\necho two', ['TOKEN']],
    );
    const text = await runCli(['template', 'ls'], env);
    assert.match(text.stdout, /refused\s+failed\s+failed at resolve\s+127\.0\.0\.1:9\/team\/app:1/);

    const logs = await runCli(['template', 'logs', 'refused'], env);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /^building template refused [\s\S]*build failed at resolve: [\s\S]*\(failed: resolve: /);

    const removed = await runCli(['template', 'rm', 'refused'], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, new RegExp(`Deleted template refused \\(${record.template_id}\\)`));
    assert.equal((await runCli(['template', 'rm', record.template_id], env)).code, 4, 'not found');
    assert.equal((await runCli(['template', 'rm', 'refused'], env)).code, 2, 'no such name');
  });
});
