/**
 * The Python client (`clients/python`) against a real server with real VMs, run with the system Python: its
 * unittest suite (the README walk-through and more, sync and asyncio: stateful Python, bash exit codes,
 * byte-exact files, an async run polled to completion, a terminal over its WebSocket, 401/403/404/422/429 as
 * their error classes, answers checked against the generated models, `models.py` against this server's
 * OpenAPI document), then the README's example `examples/typed_usage.py` from the repository's sources.
 * Both execute code, so they boot VMs: this file is heavy (it imports helpers/test-server.ts).
 * The package built as a wheel and installed into fresh venvs boots no VM (a health check and a key check
 * against a server, and the unit tests without one): python-client-install.test.ts, in the light lane, so it runs
 * beside the heavy lane rather than lengthening it. Its static checks (mypy, pyflakes, black) need no server:
 * python-client-checks.test.ts, light too. The helpers they share are in python-tools.ts.
 * Needs the VM engine (QEMU; KVM when available) and Python 3.9+ with httpx and websockets
 * (Debian: python3-httpx, python3-websockets).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { CLIENT, explain, PYTHON, PYTHON_ENV, run } from './python-tools.ts';

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
          tiny: { executionsPerMinute: 3, maxConcurrentVms: 1, maxTotalVcpus: 2, diskMb: 1024, maxBrowserSessions: 1, pausedRetentionSeconds: 604_800 },
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
      ...PYTHON_ENV,
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

  test("the README's example (examples/typed_usage.py) runs from the repository's sources and prints what it says", { timeout: 240_000 }, async () => {
    // The package from clients/python/src, the program run from a folder outside the repository.
    const ran = await run(PYTHON, [path.join(CLIENT, 'examples', 'typed_usage.py')], { env: { ...env, PYTHONPATH: path.join(CLIENT, 'src') }, cwd: work });
    assert.equal(ran.code, 0, explain('examples/typed_usage.py', ran));
    assert.equal(ran.stdout, '42\nTrue 22\nTrue active\n');
  });
});
