/**
 * `sandbox deploy` and `sandbox apps` as a user runs them (a child process), against the real server and real VMs:
 * a folder without a manifest is refused before anything is sent, and a manifest the server refuses is a usage
 * error too; a deploy prints the deployment's log prefixed with its version and the URL, which then serves the
 * folder; a redeploy serves the new files; `apps rollback` brings the first version back at the same URL; ls, show,
 * deployments and logs tell the story; rm stops the URL.
 * One server, one app (the server's own tests cover the rest of deployments).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { rawRequest } from '../../server/test/helpers/raw-http.ts';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { makeHome, runCli, type CliHome } from './run-cli.ts';

/** A first deploy under TCG: a VM, the upload, a snapshot, the start and the health check. */
const DEPLOY_TIMEOUT_MS = 10 * 60_000;

describe('sandbox deploy and sandbox apps', { timeout: 30 * 60_000 }, () => {
  let server: TestServer;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;
  let folder: string;
  let url: URL;

  /** What the app's URL answers (the Host header names the app: *.localhost may not resolve here). */
  const page = async () => {
    const answer = await rawRequest(Number(url.port), '/', { host: url.host });
    return { status: answer.status, text: answer.body.toString() };
  };
  const writeVersion = (text: string) => fs.writeFileSync(path.join(folder, 'index.html'), `${text}\n`);

  before(async () => {
    server = await startTestServer();
    const { apiKey } = await server.createUserWithKey('dora', 'pro');
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: apiKey });
    folder = path.join(home.home, 'hello');
    fs.mkdirSync(path.join(folder, 'node_modules', 'left-out'), { recursive: true });
    fs.writeFileSync(path.join(folder, 'node_modules', 'left-out', 'index.html'), 'never uploaded\n');
    fs.writeFileSync(path.join(folder, 'secret.txt'), 'never uploaded\n');
    fs.writeFileSync(path.join(folder, '.sandboxdignore'), '# local only\nsecret.txt\n');
    fs.writeFileSync(
      path.join(folder, 'sandboxd.yaml'),
      ['name: hello', 'port: 8000', 'start: python3 -m http.server 8000', 'health_check:', '  path: /', '  start_timeout_seconds: 300', ''].join('\n'),
    );
    writeVersion('hello v1');
  });
  after(async () => {
    home?.remove();
    await server?.close();
  });

  test('a folder without a manifest is a usage error, before any request', async () => {
    const empty = path.join(home.home, 'empty');
    fs.mkdirSync(empty);
    const refused = await runCli(['deploy', empty], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /no sandboxd\.yaml in .*empty/);
    // A manifest the server refuses: exit 2 too, with the server's message naming the field.
    fs.writeFileSync(path.join(empty, 'sandboxd.yaml'), 'port: eighty\nstart: python3 app.py\n');
    const rejected = await runCli(['deploy', empty], env);
    assert.equal(rejected.code, 2, rejected.stderr);
    assert.match(rejected.stderr, /port/);
    assert.equal((await runCli(['apps', 'ls'], env)).stdout.trim(), 'No apps. Deploy a folder with `sandbox deploy`.');
  });

  test('deploy prints the log by version and the URL, which serves the folder (what is ignored is not uploaded)', { timeout: DEPLOY_TIMEOUT_MS }, async () => {
    const started = Date.now();
    const deployed = await runCli(['deploy', folder], env);
    console.log(`sandbox deploy (first version): ${((Date.now() - started) / 1000).toFixed(1)} s\n${deployed.stderr}`);
    assert.equal(deployed.code, 0, deployed.stderr);
    assert.match(deployed.stderr, /^\[v1\] /m, 'the deployment log, each line after its version');
    assert.match(deployed.stderr, /hello v1 is live at http:\/\/hello--dora\.localhost:\d+\//);
    url = new URL(deployed.stdout.trim());
    assert.equal(url.hostname, 'hello--dora.localhost');
    assert.deepEqual(await page(), { status: 200, text: 'hello v1\n' });
    assert.equal((await rawRequest(Number(url.port), '/secret.txt', { host: url.host })).status, 404, '.sandboxdignore left it out');
    assert.equal((await rawRequest(Number(url.port), '/node_modules/left-out/index.html', { host: url.host })).status, 404);
  });

  test('a redeploy serves the new files at the same URL', { timeout: DEPLOY_TIMEOUT_MS }, async () => {
    writeVersion('hello v2');
    const started = Date.now();
    const redeployed = await runCli(['deploy', folder, '--json'], env);
    console.log(`sandbox deploy (a redeploy): ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.equal(redeployed.code, 0, redeployed.stderr);
    assert.equal(redeployed.json.deployment.version, 2);
    assert.equal(redeployed.json.deployment.status, 'live');
    assert.equal(redeployed.json.app.url, url.href);
    assert.deepEqual(await page(), { status: 200, text: 'hello v2\n' });

    const listed = await runCli(['apps', 'ls'], env);
    assert.match(listed.stdout, new RegExp(`^hello\\s+live\\s+v2\\s+1\\s+${url.href.replace(/[.]/g, '\\.')}$`, 'm'));
    const deployments = await runCli(['apps', 'deployments', 'hello', '--json'], env);
    assert.deepEqual(
      deployments.json.map((d: { version: number; status: string }) => [d.version, d.status]),
      [
        [2, 'live'],
        [1, 'superseded'],
      ],
    );
  });

  test('apps rollback brings v1 back at the same URL; show and logs say so', { timeout: DEPLOY_TIMEOUT_MS }, async () => {
    const started = Date.now();
    const rolled = await runCli(['apps', 'rollback', 'hello', '1'], env);
    console.log(`sandbox apps rollback: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.equal(rolled.code, 0, rolled.stderr);
    assert.match(rolled.stderr, /Rolling hello back to v1/);
    assert.equal(rolled.stdout.trim(), url.href);
    assert.deepEqual(await page(), { status: 200, text: 'hello v1\n' });
    const shown = await runCli(['apps', 'show', 'hello', '--json'], env);
    assert.equal(shown.json.live_version, 1);
    assert.equal(shown.json.latest_version, 2);
    // A custom domain claimed for the app (`domains add --app`) is shown by `apps show` (pending: no DNS here).
    const claimed = await runCli(['domains', 'add', 'hello-cli.example.com', '--app', 'hello', '--json'], env);
    assert.equal(claimed.code, 0, claimed.stderr);
    const shownText = await runCli(['apps', 'show', 'hello'], env);
    assert.match(shownText.stdout, new RegExp(`^domain:\\s+hello-cli\\.example\\.com \\(pending: ${claimed.json.id}\\)$`, 'm'));
    // http.server logs each request on stderr: the one just made is in the app's output.
    const logs = await runCli(['apps', 'logs', 'hello'], env);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /"GET \/ HTTP\/1\.1" 200/);
    const deployLog = await runCli(['apps', 'logs', 'hello', '--deployment', '2'], env);
    assert.equal(deployLog.code, 0, deployLog.stderr);
    assert.notEqual(deployLog.stdout.trim(), '');
  });

  test('apps rm deletes the app and its URL stops answering', async () => {
    const removed = await runCli(['apps', 'rm', 'hello'], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.notEqual((await page()).status, 200);
    const gone = await runCli(['apps', 'show', 'hello'], env);
    assert.equal(gone.code, 4, gone.stderr);
  });
});
