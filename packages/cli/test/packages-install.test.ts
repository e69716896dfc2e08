/**
 * The published client packages as a user gets them: `@sandboxd/sdk`, `@sandboxd/mcp` and `@sandboxd/cli` packed
 * with `npm pack` (its prepack builds dist/), the tarballs checked to hold only what is published (dist/, the bin,
 * README.md, LICENSE, package.json: no sources, no tests), installed together into an empty project outside the
 * repository (their npm dependencies from the npm cache), and then each package's README example run there as it is,
 * with plain `node` and no tsx, against a real server with real VMs: the SDK's example script, the `sandbox`
 * command's example lines, and the MCP package's stdio server driven by the official MCP client. One server, one
 * warm snapshot (every example asks for the server's default size, 1 vCPU here), one VM at a time.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
// @ts-expect-error: a plain .mjs script of the set-up, without declarations
import { ensureClientPackagesBuilt } from '../../../scripts/build-sdk.mjs';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const VERSION = '0.3.0';
const PACKAGES = ['sdk', 'mcp', 'cli'] as const;

/** The fenced blocks of one language under a README's "## Example" heading (up to the next "## "), as written. */
function exampleBlocks(pkg: (typeof PACKAGES)[number], language: string): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'packages', pkg, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Example\n');
  assert.ok(start >= 0, `packages/${pkg}/README.md has a "## Example" section`);
  const rest = readme.slice(start + 1);
  const next = rest.indexOf('\n## ', 1);
  const section = next < 0 ? rest : rest.slice(0, next);
  const blocks = [...section.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
  assert.ok(blocks.length > 0, `packages/${pkg}/README.md's example has a \`\`\`${language} block`);
  return blocks;
}

interface Packed {
  name: string;
  version: string;
  filename: string;
  files: { path: string }[];
}

describe('the client packages, installed from their tarballs into an empty project', () => {
  let server: TestServer;
  let work: string;
  let project: string;
  let env: NodeJS.ProcessEnv;
  const packed = new Map<string, Packed>();

  before(async () => {
    (ensureClientPackagesBuilt as (step: (message: string) => void) => boolean)(() => undefined);
    // Every example takes the server's default size: 1 vCPU, the snapshot the test server warms.
    server = await startTestServer({ config: { defaultVcpus: 1 } });
    const started = server.services.sandbox.vms.start();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-packages-install-'));

    for (const pkg of PACKAGES) {
      const out = await run('npm', ['pack', '--json', '--pack-destination', work, '-w', `@sandboxd/${pkg}`], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
      const [info] = JSON.parse(out.stdout.slice(out.stdout.indexOf('['))) as Packed[];
      packed.set(pkg, info!);
    }
    project = path.join(work, 'app');
    fs.mkdirSync(project);
    await run('npm', ['init', '-y'], { cwd: project });
    // The MCP example's client is the official SDK's, which the README has the user install beside.
    const mcpSdk = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version as string;
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        ...PACKAGES.map((pkg) => path.join(work, packed.get(pkg)!.filename)),
        `@modelcontextprotocol/sdk@${mcpSdk}`,
      ],
      { cwd: project, maxBuffer: 16 * 1024 * 1024, timeout: 300_000 },
    );

    await started;
    const { apiKey } = await server.createUserWithKey('packager', 'pro');
    const home = path.join(work, 'home');
    fs.mkdirSync(home);
    env = {
      PATH: `${path.join(project, 'node_modules', '.bin')}:${process.env.PATH}`,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      SANDBOXD_URL: server.baseUrl,
      SANDBOXD_API_KEY: apiKey,
    };
  });

  after(async () => {
    await server?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('each tarball holds the compiled package only: dist/, the bin, README.md, LICENSE, package.json', () => {
    const needed: Record<string, string[]> = {
      sdk: ['dist/index.js', 'dist/index.d.ts'],
      mcp: ['dist/index.js', 'dist/index.d.ts'],
      cli: ['dist/main.js', 'bin/sandbox.mjs'],
    };
    for (const pkg of PACKAGES) {
      const info = packed.get(pkg)!;
      assert.equal(info.name, `@sandboxd/${pkg}`);
      assert.equal(info.version, VERSION);
      const files = info.files.map((f) => f.path);
      for (const file of ['package.json', 'README.md', 'LICENSE', ...needed[pkg]!]) assert.ok(files.includes(file), `${pkg}: ${file} is packed`);
      const other = files.filter((f) => !/^(dist\/.+|bin\/sandbox\.mjs|README\.md|LICENSE|package\.json)$/.test(f));
      assert.deepEqual(other, [], `${pkg}: nothing else (no src/, no test/)`);
      assert.ok(!files.some((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), `${pkg}: no TypeScript sources`);

      const manifest = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', '@sandboxd', pkg, 'package.json'), 'utf8'));
      assert.equal(manifest.license, 'Apache-2.0');
      assert.equal(manifest.private, undefined, `${pkg} is publishable`);
      assert.deepEqual(manifest.publishConfig, { access: 'public' });
      assert.ok(manifest.repository?.url && manifest.homepage && manifest.engines?.node && manifest.keywords?.length, `${pkg}: registry metadata`);
      assert.match(fs.readFileSync(path.join(project, 'node_modules', '@sandboxd', pkg, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
    }
    // Nothing installed runs TypeScript: the command's dependencies have no tsx.
    assert.ok(!fs.existsSync(path.join(project, 'node_modules', 'tsx')), 'tsx is not installed');
  });

  test("the SDK's README example runs under plain node", { timeout: 300_000 }, async () => {
    const [example] = exampleBlocks('sdk', 'js');
    fs.writeFileSync(path.join(project, 'example.mjs'), example!);
    const { stdout } = await run(process.execPath, ['example.mjs'], { cwd: project, env, timeout: 240_000 });
    assert.deepEqual(stdout.split('\n').filter(Boolean), ['2', 'data', 'true']);
  });

  test("`sandbox --version`, and the command's README example lines", { timeout: 300_000 }, async () => {
    const version = await run('sandbox', ['--version'], { cwd: project, env });
    assert.equal(version.stdout.trim(), VERSION);
    const bin = fs.realpathSync(path.join(project, 'node_modules', '.bin', 'sandbox'));
    assert.equal(bin, fs.realpathSync(path.join(project, 'node_modules', '@sandboxd', 'cli', 'bin', 'sandbox.mjs')));

    const [example] = exampleBlocks('cli', 'sh');
    const { stdout, stderr } = await run('bash', ['-e', '-c', example!], { cwd: project, env, timeout: 240_000 });
    const lines = stdout.split('\n');
    assert.equal(lines[0], '42', `${stdout}\n${stderr}`);
    assert.ok(lines.includes('x86_64'), stdout);
    // The session the first line made stayed the current one to the end, and `sandbox kill` ended its VM.
    const status = await run('sandbox', ['--json', 'status'], { cwd: project, env });
    assert.equal((JSON.parse(status.stdout) as { vm_alive: boolean }).vm_alive, false, status.stdout);
  });

  test("the MCP package's README example: its stdio server, called by the official MCP client", { timeout: 300_000 }, async () => {
    const [serverScript, clientScript] = exampleBlocks('mcp', 'js');
    assert.ok(serverScript && clientScript, 'the server and the client blocks');
    fs.writeFileSync(path.join(project, 'mcp-server.mjs'), serverScript);
    fs.writeFileSync(path.join(project, 'try-it.mjs'), clientScript);
    const { stdout } = await run(process.execPath, ['try-it.mjs'], { cwd: project, env, timeout: 240_000 });
    const [tools, ...result] = stdout.split('\n');
    assert.match(tools!, /\bcreate_sandbox\b.*\brun_python\b/);
    assert.match(result.join('\n'), /^Completed: exit code 0\b[^]*^42$/m, stdout);

    // The installed command serves the same tools (`sandbox mcp`, over the installed @sandboxd/mcp).
    const client = new Client({ name: 'packages-install-test', version: '1.0.0' });
    const command = path.join(project, 'node_modules', '.bin', 'sandbox');
    const transport = new StdioClientTransport({ command, args: ['mcp'], env: env as Record<string, string>, cwd: project, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await client.connect(transport);
    try {
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      assert.deepEqual(listed.join(' '), tools);
      assert.match(stderr, /sandbox mcp: serving http:\/\/127\.0\.0\.1:\d+ over stdio \(API key from SANDBOXD_API_KEY\)/);
    } finally {
      await client.close();
    }
  });
});
