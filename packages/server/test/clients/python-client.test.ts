/**
 * The Python client (`clients/python`) against a real server with real VMs, run with the system Python: its
 * unittest suite (the README walk-through and more, sync and asyncio: stateful Python, bash exit codes,
 * byte-exact files, an async run polled to completion, a terminal over its WebSocket, 401/403/404/422/429 as
 * their error classes, answers checked against the generated models, `models.py` against this server's
 * OpenAPI document), then the package built as a wheel and installed into fresh venvs, offline, its dependencies
 * (httpx, websockets) taken from the system's Python packages. Its static checks (mypy, pyflakes, black) need no
 * server: python-client-checks.test.ts, in the light lane.
 * Needs the VM engine (QEMU; KVM when available) and Python 3.9+ with venv, pip, setuptools, wheel, httpx and
 * websockets (Debian: python3-httpx, python3-websockets).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const CLIENT = path.join(REPOSITORY, 'clients/python');
/** The system Python: pyenv's shims come first on PATH here, and the task is the Python the OS ships. */
const PYTHON = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program without blocking the event loop (the server under test answers from this process). */
function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? REPOSITORY, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 240_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function explain(what: string, ran: Ran): string {
  return `${what} exited with ${ran.code}\n--- stdout\n${ran.stdout.slice(-20_000)}\n--- stderr\n${ran.stderr.slice(-20_000)}`;
}

/** A copy of the package's sources (what a checkout has), so builds leave nothing in the work tree. */
function copyOfPackage(into: string): string {
  const target = path.join(into, 'sandboxd-src');
  fs.mkdirSync(target, { recursive: true });
  for (const name of ['pyproject.toml', 'README.md', 'src']) {
    fs.cpSync(path.join(CLIENT, name), path.join(target, name), {
      recursive: true,
      filter: (source) => !/(__pycache__|\.egg-info|\.pyc)$/.test(source),
    });
  }
  return target;
}

describe('the Python client', () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;
  let work: string;

  before(async () => {
    server = await startTestServer({
      config: {
        plans: {
          ...DEFAULT_PLANS,
          // 3 executions a minute and one VM: the Python tests provoke 429 RATE_LIMITED and QUOTA_EXCEEDED with it.
          tiny: { executionsPerMinute: 3, maxConcurrentVms: 1, maxTotalVcpus: 2, diskMb: 1024, maxBrowserSessions: 1 },
        },
      },
    });
    const main = await server.createUserWithKey('python', 'pro');
    const tiny = await server.createUserWithKey('python-tiny', 'tiny');
    const other = await server.createUserWithKey('python-other', 'pro');
    env = {
      ...process.env,
      SANDBOXD_URL: server.baseUrl,
      SANDBOXD_API_KEY: main.apiKey,
      SANDBOXD_TEST_TINY_API_KEY: tiny.apiKey,
      // Whether the server enforces egress (and so accepts vault_ids): the Python tests expect one outcome.
      SANDBOXD_TEST_EGRESS_ENFORCED: server.services.sandbox.egress.enforces ? '1' : '0',
      SANDBOXD_TEST_OTHER_API_KEY: other.apiKey,
      SANDBOXD_TEST_USERNAME: 'python',
      SANDBOXD_TEST_PASSWORD: main.password,
      // No __pycache__ folders in the work tree; output as it comes.
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONUNBUFFERED: '1',
    };
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-python-'));
  });

  after(async () => {
    fs.rmSync(work, { recursive: true, force: true });
    await server.close();
  });

  test('its test suite passes against a real server with real VMs, nothing skipped', { timeout: 300_000 }, async () => {
    const ran = await run(PYTHON, ['-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-v'], { env });
    assert.equal(ran.code, 0, explain('python3 -m unittest', ran));
    // unittest writes its report to stderr: every test ran (the live ones skip without a server).
    const summary = ran.stderr.trim().split('\n').slice(-3).join('\n');
    assert.match(summary, /^OK$/m, summary);
    assert.doesNotMatch(ran.stderr, /\.\.\. skipped/, 'no test was skipped');
    const count = Number(/Ran (\d+) tests?/.exec(ran.stderr)?.[1]);
    assert.ok(count >= 40, `ran ${count} tests`);
  });

  test('the wheel builds offline, installs into a fresh venv, and its own tests and a call to the server pass there', { timeout: 240_000 }, async () => {
    const source = copyOfPackage(work);
    const dist = path.join(work, 'dist');
    const built = await run(PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-w', dist, source], { env });
    assert.equal(built.code, 0, explain('pip wheel', built));
    const wheels = fs.readdirSync(dist).filter((name) => name.endsWith('.whl'));
    assert.deepEqual(wheels, ['sandboxd-0.2.2-py3-none-any.whl']);
    const wheel = path.join(dist, wheels[0]!);

    const venv = path.join(work, 'venv-wheel');
    // --system-site-packages: the dependencies (httpx, websockets) come from the system's packages, offline;
    // pip checks them (no --no-deps) and fails if they are missing or too old.
    const made = await run(PYTHON, ['-m', 'venv', '--system-site-packages', venv], { env });
    assert.equal(made.code, 0, explain('python3 -m venv', made));
    const python = path.join(venv, 'bin', 'python');
    const installed = await run(python, ['-m', 'pip', 'install', '--no-index', wheel], { env });
    assert.equal(installed.code, 0, explain('pip install (the wheel)', installed));

    // From outside the repository, so nothing but the installed package can be imported.
    const script = [
      'import pathlib, sandboxd',
      'assert pathlib.Path(sandboxd.__file__).is_relative_to(pathlib.Path(__import__("sys").prefix)), sandboxd.__file__',
      'assert (pathlib.Path(sandboxd.__file__).parent / "py.typed").exists()',
      'client = sandboxd.Sandboxd()',
      'assert client.health() == {"status": "ok"} and client.health().status == "ok"',
      'assert client.api_keys.check()',
      'print(sandboxd.__version__)',
    ].join('\n');
    const called = await run(python, ['-c', script], { env, cwd: work });
    assert.equal(called.code, 0, explain('the installed wheel', called));
    assert.equal(called.stdout.trim(), '0.2.2');
    // The client README's example (examples/typed_usage.py) against the installed wheel, from outside the repository.
    const example = path.join(work, 'typed_usage.py');
    fs.copyFileSync(path.join(CLIENT, 'examples', 'typed_usage.py'), example);
    const ran = await run(python, [example], { env, cwd: work });
    assert.equal(ran.code, 0, explain('examples/typed_usage.py with the installed wheel', ran));
    assert.equal(ran.stdout, '42\nTrue 22\nTrue active\n');

    // The unit tests (no server: the live ones skip) against the installed package.
    const offline = { ...env, SANDBOXD_TEST_INSTALLED: '1', SANDBOXD_URL: '', SANDBOXD_API_KEY: '' };
    const unit = await run(python, ['-m', 'unittest', 'discover', '-s', path.join(CLIENT, 'tests')], { env: offline, cwd: work });
    assert.equal(unit.code, 0, explain('the unit tests with the installed wheel', unit));
  });

  test('pip install of the package folder works the same way (offline, with the installed setuptools)', { timeout: 240_000 }, async () => {
    const source = copyOfPackage(path.join(work, 'folder'));
    const venv = path.join(work, 'venv-folder');
    // --no-build-isolation: pip would otherwise fetch setuptools from an index (none is reachable here); with
    // --system-site-packages the venv builds with the system's setuptools and wheel.
    const made = await run(PYTHON, ['-m', 'venv', '--system-site-packages', venv], { env });
    assert.equal(made.code, 0, explain('python3 -m venv', made));
    const python = path.join(venv, 'bin', 'python');
    const installed = await run(python, ['-m', 'pip', 'install', '--no-index', '--no-build-isolation', source], { env });
    assert.equal(installed.code, 0, explain('pip install (the folder)', installed));
    const called = await run(python, ['-c', 'import sandboxd; c = sandboxd.AsyncSandboxd(); import asyncio; print(asyncio.run(c.health()))'], {
      env,
      cwd: work,
    });
    assert.equal(called.code, 0, explain('the installed package', called));
    assert.equal(called.stdout.trim(), "GetHealthzResponse({'status': 'ok'})");
  });
});
