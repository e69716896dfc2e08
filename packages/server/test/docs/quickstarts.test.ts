/**
 * Every command of the quickstarts runs (docs/quickstart/*.md): the blocks marked `<!-- run -->` are taken from the
 * markdown as they are and run against one real server with real VMs — curl's and the CLI's as bash scripts, the
 * TypeScript and MCP programs under plain node in the repository (where @sandboxd/sdk and the MCP SDK resolve),
 * the Python one with the client's sources on PYTHONPATH — with SANDBOXD_URL and SANDBOXD_API_KEY set, as a reader
 * sets them. Every block is either run or marked skip with a reason (quickstart-blocks.ts).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { explain, PYTHON, PYTHON_ENV, run, type Ran } from '../clients/python-tools.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { QUICKSTARTS, REPOSITORY, quickstartBlocks, runnable } from './quickstart-blocks.ts';
// @ts-expect-error: a plain .mjs script of the set-up, without declarations
import { ensureSdkBuilt } from '../../../../scripts/build-sdk.mjs';

test('every block of every quickstart is marked run or skip (with a reason), and each has something to run', () => {
  for (const name of QUICKSTARTS) {
    const blocks = quickstartBlocks(name);
    const unmarked = blocks.filter((b) => !b.mark).map((b) => `docs/quickstart/${name}.md:${b.line}`);
    assert.deepEqual(unmarked, [], 'a block with neither <!-- run --> nor <!-- skip: why --> after its fence');
    for (const b of blocks) if (b.mark && !b.mark.run) assert.ok(b.mark.reason.length > 5, `docs/quickstart/${name}.md:${b.line}: say why it is skipped`);
    assert.ok(
      blocks.some((b) => b.mark?.run),
      `${name}.md runs nothing`,
    );
  }
});

describe('the quickstarts, against a real server', () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-quickstarts-'));

  before(async () => {
    ensureSdkBuilt(() => undefined);
    // The quickstarts take the default vCPU count (2): its snapshot is warmed before they run.
    server = await startTestServer({ config: { warmVcpus: [2] } });
    await server.services.sandbox.vms.start();
    const { apiKey } = await server.createUserWithKey('reader', 'pro');
    // `sandbox` on PATH as `npm start` installs it (the published entry point), and a home of its own for the
    // command line's current session.
    const bin = path.join(work, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync(path.join(REPOSITORY, 'packages/cli/bin/sandbox.mjs'), path.join(bin, 'sandbox'));
    env = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: path.join(work, 'home'),
      XDG_CONFIG_HOME: path.join(work, 'home', '.config'),
      SANDBOXD_URL: server.baseUrl,
      SANDBOXD_API_KEY: apiKey,
      ...PYTHON_ENV,
    };
    fs.mkdirSync(env.XDG_CONFIG_HOME!, { recursive: true });
  });
  after(async () => {
    await server?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** Runs a program; fails with its output unless it exits 0. */
  const ok = async (what: string, command: string, args: string[], cwd = work): Promise<string> => {
    const ran: Ran = await run(command, args, { cwd, env, timeoutMs: 300_000 });
    assert.equal(ran.code, 0, explain(what, ran));
    return ran.stdout;
  };
  const bash = (name: 'curl' | 'cli') => ok(`${name}.md as bash`, 'bash', ['-euo', 'pipefail', '-c', runnable(name, ['bash'])]);

  /** What every quickstart shows: stateful Python, a file uploaded and read back. */
  const assertRan = (stdout: string) => {
    assert.match(stdout, /^42$/m, 'x = 21, then print(x * 2)');
    assert.match(stdout, /hello from the quickstart/, 'the file read back');
  };

  test('curl: a key, a session, stateful Python, bash, a file each way, the end', { timeout: 300_000 }, async () => {
    const stdout = await bash('curl');
    assertRan(stdout);
    assert.match(stdout, /^sbx_sk_/m, 'the new key');
    assert.match(stdout, /^Linux$/m);
    assert.match(stdout, /^made-in-vm$/m, 'the file the code wrote');
  });

  test('TypeScript: the program under plain node', { timeout: 300_000 }, async () => {
    const stdout = await ok('typescript.md', process.execPath, ['--input-type=module', '-e', runnable('typescript', ['js'])], REPOSITORY);
    assertRan(stdout);
    assert.match(stdout, /^0 Linux$/m);
    assert.match(stdout, /^made-in-vm$/m);
    assert.match(stdout, /^done$/m);
  });

  test('Python: the program with the client', { timeout: 300_000 }, async () => {
    const code = runnable('python', ['python']);
    const ran = await run(PYTHON, ['-c', code], { cwd: work, env: { ...env, PYTHONPATH: path.join(REPOSITORY, 'clients/python/src') }, timeoutMs: 300_000 });
    assert.equal(ran.code, 0, explain('python.md', ran));
    assertRan(ran.stdout);
    assert.match(ran.stdout, /^0 Linux$/m);
    assert.match(ran.stdout, /^made-in-vm$/m);
    assert.match(ran.stdout, /^done$/m);
  });

  test('CLI: the sandbox command', { timeout: 300_000 }, async () => {
    const stdout = await bash('cli');
    assertRan(stdout);
    assert.match(stdout, /^key: +from SANDBOXD_API_KEY$/m, 'whoami');
    assert.match(stdout, /hello\.txt/, 'files ls');
  });

  test('the server links the API reference from /docs and serves it at /docs/reference (or says how to build it)', async () => {
    const document = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as { info: { description: string } };
    assert.match(document.info.description, /\(\/docs\/reference\)/, 'the link in the interactive docs');
    const res = await fetch(`${server.baseUrl}/docs/reference`);
    const body = await res.text();
    if (fs.existsSync(path.join(REPOSITORY, 'docs/reference/api/index.html'))) {
      assert.equal(res.status, 200);
      assert.match(body, /Redoc\.init\(/);
      assert.match(String(res.headers.get('content-security-policy')), /script-src 'sha256-/);
    } else {
      assert.equal(res.status, 404);
      assert.match(body, /npm run docs:api/);
    }
  });

  test('MCP: sandbox mcp over stdio, driven by the MCP SDK', { timeout: 300_000 }, async () => {
    const stdout = await ok('mcp.md', process.execPath, ['--input-type=module', '-e', runnable('mcp', ['js'])], REPOSITORY);
    assert.match(stdout, /create_sandbox .*run_python/, 'the tools');
    assertRan(stdout);
    assert.match(stdout, /^done$/m);
  });
});
