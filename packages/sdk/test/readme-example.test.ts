/**
 * `@sandboxd/sdk` is usable the way the docs show it: the client example of docs/clients/typescript.md (the
 * README's before the docs moved to docs/), taken from there as it is, runs under plain `node` (no tsx, no source condition) in the repository, where the set-up builds
 * `dist/`, and from `npm pack`'s tarball installed offline into an empty project elsewhere. Against a real
 * server with real VMs: one session at a time (each run makes one and kills it).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
// @ts-expect-error: a plain .mjs script of the set-up, without declarations
import { ensureSdkBuilt, sdkSourcesHash } from '../../../scripts/build-sdk.mjs';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The first JavaScript block of the client library section of docs/clients/typescript.md. */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'docs', 'clients', 'typescript.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Client library'));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('no ```js block in the client library section of docs/clients/typescript.md');
  return match[1]!;
}

describe('the README client example under plain node', () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-readme-example-'));

  before(async () => {
    ensureSdkBuilt(() => undefined);
    // The example asks for 2 vCPUs: that snapshot is built (once per machine) before the example runs, so its
    // first execute does not wait for a cold boot within the client's 15 s.
    server = await startTestServer({ config: { warmVcpus: [2] } });
    await server.services.sandbox.vms.start();
    const { apiKey } = await server.createUserWithKey('reader', 'pro');
    env = { PATH: process.env.PATH, HOME: process.env.HOME, SANDBOXD_API_KEY: apiKey, SANDBOXD_URL: server.baseUrl };
  });
  after(async () => {
    await server?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** Runs the example with plain node (asynchronously: the server answers from this very process). */
  const runExample = async (args: string[], cwd: string) => {
    const { stdout } = await run(process.execPath, args, { cwd, env, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
    assert.match(stdout, /^42$/m);
    assert.match(stdout, /^hello$/m);
    assert.match(stdout, /^done$/m);
    assert.match(stdout, /^3 /m, 'the bash exit code');
    assert.match(stdout, /sbx_sk_/, 'the new key prefix');
    return stdout;
  };

  test('the set-up builds dist/, and rebuilds it only when the sources changed', () => {
    assert.match(fs.readFileSync(path.join(ROOT, 'scripts', 'setup.mjs'), 'utf8'), /buildAll\(step\)/);
    assert.match(fs.readFileSync(path.join(ROOT, 'scripts', 'build.mjs'), 'utf8'), /ensureClientPackagesBuilt\(step\)/);
    assert.equal(fs.readFileSync(path.join(ROOT, 'node_modules', '.sandboxd-sdk-hash'), 'utf8'), sdkSourcesHash());
    assert.equal(
      ensureSdkBuilt(() => undefined),
      false,
      'nothing to do for the same sources',
    );
  });

  test('in the repository, import("@sandboxd/sdk") resolves to the built dist/ and runs the example', async () => {
    const resolved = await run(process.execPath, ['--input-type=module', '-e', 'console.log(import.meta.resolve("@sandboxd/sdk"))'], { cwd: ROOT, env });
    assert.equal(fileURLToPath(resolved.stdout.trim()), path.join(ROOT, 'packages', 'sdk', 'dist', 'index.js'));
    await runExample(['--input-type=module', '-e', readmeExample()], ROOT);
  });

  test('npm pack: the tarball installs offline into an empty project elsewhere and runs the same example', async () => {
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work, '-w', '@sandboxd/sdk'], {
      cwd: ROOT,
      env: { ...process.env },
      maxBuffer: 16 * 1024 * 1024,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    assert.ok(
      info!.files.some((f) => f.path === 'dist/index.js'),
      'the tarball holds dist/',
    );
    assert.ok(!info!.files.some((f) => f.path.startsWith('src/')), 'and not the sources');

    const project = path.join(work, 'app');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'readme-example', private: true, type: 'module' }));
    // No runtime dependencies, so nothing is fetched: --offline proves it.
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', path.join(work, info!.filename)], {
      cwd: project,
      env: { ...process.env },
    });
    fs.writeFileSync(path.join(project, 'example.mjs'), readmeExample());
    const resolved = await run(process.execPath, ['--input-type=module', '-e', 'console.log(import.meta.resolve("@sandboxd/sdk"))'], { cwd: project, env });
    assert.ok(fileURLToPath(resolved.stdout.trim()).startsWith(path.join(fs.realpathSync(project), 'node_modules')), resolved.stdout);
    await runExample(['example.mjs'], project);
  });
});
