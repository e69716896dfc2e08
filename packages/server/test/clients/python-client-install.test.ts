// test-lane: light (its server boots no VM: a health check and a key check only; helpers/test-server.ts fails the file if one does)
/**
 * The Python client (`clients/python`) as a user installs it, with the system Python, offline: the package built
 * as a wheel and installed into a fresh venv (the installed files imported, a health check and a key check against
 * a real server, then the client's unit tests against the installed package with no server: the live ones skip),
 * the sdist (built with python3-build; its metadata and LICENSE checked, as the wheel's) installed into a fresh
 * venv from itself (imported, a health check), and `pip install` of the package folder (an asyncio health check).
 * Its dependencies (httpx, websockets) come from the system's Python packages. None of it executes code, so its server boots no VM: this file runs in the
 * light lane, beside the heavy one, where it would only lengthen the suite's wall time. What does boot VMs (the
 * unittest suite against a real server, the README's example `examples/typed_usage.py`) is
 * python-client.test.ts, heavy; the static checks are python-client-checks.test.ts. Shared helpers:
 * python-tools.ts.
 * Needs Python 3.9+ with venv, pip, setuptools, wheel, build, httpx and websockets (Debian: python3-venv,
 * python3-pip, python3-setuptools, python3-wheel, python3-build, python3-httpx, python3-websockets).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { CLIENT, copyOfPackage, explain, PYTHON, PYTHON_ENV, run } from './python-tools.ts';

/** Prints a wheel's METADATA and its file names as JSON (argv[1]: the wheel). */
const WHEEL_METADATA = [
  'import json, sys, zipfile',
  'wheel = zipfile.ZipFile(sys.argv[1])',
  'names = wheel.namelist()',
  'meta = next(n for n in names if n.endswith(".dist-info/METADATA"))',
  'print(json.dumps({"METADATA": wheel.read(meta).decode(), "files": names}))',
].join('\n');

/** The core metadata (a wheel's METADATA, an sdist's PKG-INFO) says what an index and `pip show` need. */
function checkMetadata(fields: string): void {
  const header = fields.slice(0, fields.indexOf('\n\n'));
  assert.match(header, /^Version: 0\.3\.0$/m);
  assert.match(header, /^License: Apache-2\.0$/m);
  assert.match(header, /^Classifier: License :: OSI Approved :: Apache Software License$/m);
  assert.match(header, /^Classifier: Operating System :: /m);
  assert.match(header, /^Author: /m);
  assert.match(header, /^Maintainer: /m);
  assert.match(header, /^Keywords: .*sandboxd/m);
  for (const label of ['Homepage', 'Documentation', 'Source', 'Issues', 'Changelog']) {
    assert.match(header, new RegExp(`^Project-URL: ${label}, https://`, 'm'), label);
  }
  assert.match(header, /^Description-Content-Type: text\/markdown$/m);
  assert.match(fields.slice(header.length), /# sandboxd \(Python client\)/, 'the README is the long description');
}

describe('the Python client, installed', () => {
  let server: TestServer;
  let env: NodeJS.ProcessEnv;
  let work: string;

  before(async () => {
    server = await startTestServer();
    const user = await server.createUserWithKey('python-install', 'pro');
    env = { ...process.env, SANDBOXD_URL: server.baseUrl, SANDBOXD_API_KEY: user.apiKey, ...PYTHON_ENV };
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-python-install-'));
  });

  after(async () => {
    fs.rmSync(work, { recursive: true, force: true });
    await server.close();
  });

  /** A fresh venv that sees the system's packages (httpx, websockets, setuptools, wheel): offline, pip takes them there. */
  async function venv(name: string): Promise<string> {
    const folder = path.join(work, name);
    const made = await run(PYTHON, ['-m', 'venv', '--system-site-packages', folder], { env });
    assert.equal(made.code, 0, explain('python3 -m venv', made));
    return path.join(folder, 'bin', 'python');
  }

  test('the wheel builds offline, installs into a fresh venv, and its own tests and calls to the server pass there', { timeout: 240_000 }, async () => {
    const source = copyOfPackage(work);
    const dist = path.join(work, 'dist');
    const built = await run(PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-w', dist, source], { env });
    assert.equal(built.code, 0, explain('pip wheel', built));
    const wheels = fs.readdirSync(dist).filter((name) => name.endsWith('.whl'));
    assert.deepEqual(wheels, ['sandboxd-0.3.0-py3-none-any.whl']);
    const wheel = path.join(dist, wheels[0]!);
    // What an index shows: the license, the project's links, the classifiers; LICENSE itself travels in the wheel.
    const metadata = await run(PYTHON, ['-c', WHEEL_METADATA, wheel], { env });
    assert.equal(metadata.code, 0, explain('reading the wheel', metadata));
    const { METADATA: fields, files } = JSON.parse(metadata.stdout) as { METADATA: string; files: string[] };
    checkMetadata(fields);
    assert.ok(files.includes('sandboxd-0.3.0.dist-info/LICENSE'), files.join(' '));

    // pip checks the dependencies (no --no-deps) and fails if they are missing or too old.
    const python = await venv('venv-wheel');
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
    assert.equal(called.stdout.trim(), '0.3.0');

    // The unit tests (no server: the live ones skip) against the installed package.
    const offline = { ...env, SANDBOXD_TEST_INSTALLED: '1', SANDBOXD_URL: '', SANDBOXD_API_KEY: '' };
    const unit = await run(python, ['-m', 'unittest', 'discover', '-s', path.join(CLIENT, 'tests')], { env: offline, cwd: work });
    assert.equal(unit.code, 0, explain('the unit tests with the installed wheel', unit));
  });

  test('the sdist builds offline with the metadata and LICENSE, and installs from itself into a fresh venv', { timeout: 240_000 }, async () => {
    const source = copyOfPackage(path.join(work, 'sdist-source'));
    const dist = path.join(work, 'sdist');
    // python3-build (Debian), without isolation: the system's setuptools builds it, as pip wheel does above.
    const built = await run(PYTHON, ['-m', 'build', '--sdist', '--no-isolation', '--outdir', dist, source], { env });
    assert.equal(built.code, 0, explain('python3 -m build --sdist', built));
    assert.deepEqual(fs.readdirSync(dist), ['sandboxd-0.3.0.tar.gz']);
    const sdist = path.join(dist, 'sandboxd-0.3.0.tar.gz');
    const listed = await run('tar', ['-tzf', sdist]);
    assert.equal(listed.code, 0, explain('tar -t', listed));
    const files = listed.stdout.split('\n');
    for (const file of ['LICENSE', 'README.md', 'pyproject.toml', 'PKG-INFO', 'src/sandboxd/__init__.py', 'src/sandboxd/py.typed']) {
      assert.ok(files.includes(`sandboxd-0.3.0/${file}`), `${file} is in the sdist`);
    }
    const pkgInfo = await run('tar', ['-xzOf', sdist, 'sandboxd-0.3.0/PKG-INFO']);
    checkMetadata(pkgInfo.stdout);

    // Installed from the sdist alone (pip builds its wheel with the system's setuptools), imported from outside.
    const python = await venv('venv-sdist');
    const installed = await run(python, ['-m', 'pip', 'install', '--no-index', '--no-build-isolation', sdist], { env });
    assert.equal(installed.code, 0, explain('pip install (the sdist)', installed));
    const script = [
      'import pathlib, sys, sandboxd',
      'assert pathlib.Path(sandboxd.__file__).is_relative_to(pathlib.Path(sys.prefix)), sandboxd.__file__',
      'from importlib.metadata import metadata',
      'assert metadata("sandboxd")["License"] == "Apache-2.0"',
      'assert sandboxd.Sandboxd().health().status == "ok"',
      'print(sandboxd.__version__)',
    ].join('\n');
    const called = await run(python, ['-c', script], { env, cwd: work });
    assert.equal(called.code, 0, explain('the package installed from the sdist', called));
    assert.equal(called.stdout.trim(), '0.3.0');
  });

  test('pip install of the package folder works the same way (offline, with the installed setuptools)', { timeout: 240_000 }, async () => {
    const source = copyOfPackage(path.join(work, 'folder'));
    // --no-build-isolation: pip would otherwise fetch setuptools from an index (none is reachable here); with
    // --system-site-packages the venv builds with the system's setuptools and wheel.
    const python = await venv('venv-folder');
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
