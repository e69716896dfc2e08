/**
 * The code interpreter through the unmodified `@e2b/code-interpreter` SDK: runs with results, streamed output,
 * figures, exceptions, env vars, timeouts, contexts and languages, against one sandbox of the default template
 * (`code-interpreter-v1`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Sandbox } from '@e2b/code-interpreter';
import { NotFoundError, SandboxError, TimeoutError } from 'e2b';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

/**
 * For runs that are refused: the SDK's runCode leaves its request timer (60 s, not unref'd) running when the answer
 * is an error, which kept this file's process alive a minute after its last test. Without a request timeout it sets
 * none (the refusal comes at once anyway).
 */
const NO_REQUEST_TIMER = { requestTimeoutMs: 0 };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('e2b code interpreter', () => {
  let server: TestServer;
  let apiKey: string;
  let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
  let sandbox: Sandbox;
  before(async () => {
    server = await startTestServer();
    ({ apiKey } = await server.createUserWithKey('e2b-ci', 'pro'));
    opts = { apiKey, apiUrl: `${server.baseUrl}/e2b`, sandboxUrl: `${server.baseUrl}/e2b/sandbox` };
    sandbox = await Sandbox.create({ ...opts, envs: { CI_SANDBOX_VAR: 'global' } });
  });
  after(async () => {
    await sandbox?.kill().catch(() => {});
    await server.close();
  });

  test('the last expression is the main result, and the default context keeps state', async () => {
    const sum = await sandbox.runCode('1+1');
    assert.equal(sum.error, undefined);
    assert.equal(sum.results.length, 1);
    assert.equal(sum.results[0]!.text, '2');
    assert.equal(sum.results[0]!.isMainResult, true);
    assert.equal(sum.text, '2');
    assert.deepEqual(sum.logs, { stdout: [], stderr: [] }, 'the value is a result, not echoed as output');
    assert.equal((await sandbox.runCode('x = 41')).results.length, 0);
    assert.equal((await sandbox.runCode('x + 1')).text, '42');
    assert.equal((await sandbox.runCode("'a' + 'b'")).text, 'ab', "a string's text is shown without its quotes, as E2B does");
  });

  test('stdout and stderr stream while the code runs', async () => {
    const started = Date.now();
    const chunks: { line: string; at: number }[] = [];
    const errors: string[] = [];
    const execution = await sandbox.runCode('import sys, time\nprint("first", flush=True)\ntime.sleep(3)\nprint("second")\nprint("oops", file=sys.stderr)', {
      onStdout: (message) => void chunks.push({ line: message.line, at: Date.now() }),
      onStderr: (message) => void errors.push(message.line),
    });
    const ended = Date.now();
    assert.equal(chunks.map((chunk) => chunk.line).join(''), 'first\nsecond\n');
    assert.ok(chunks[0]!.at - started < ended - started - 2000, `the first line came ${chunks[0]!.at - started} ms in, the run ended at ${ended - started} ms`);
    assert.equal(errors.join(''), 'oops\n');
    assert.equal(execution.logs.stdout.join(''), 'first\nsecond\n');
    assert.equal(execution.logs.stderr.join(''), 'oops\n');
  });

  test('a matplotlib figure is a PNG result', async () => {
    const execution = await sandbox.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()');
    assert.equal(execution.error, undefined, JSON.stringify(execution.error));
    const figures = execution.results.filter((result) => result.png);
    assert.equal(figures.length, 1);
    assert.equal(figures[0]!.isMainResult, false);
    assert.deepEqual(Buffer.from(figures[0]!.png!, 'base64').subarray(0, 8), PNG_SIGNATURE);
    assert.ok(figures[0]!.formats().includes('png'));
  });

  test('an exception is the execution error, with its traceback', async () => {
    const seen: string[] = [];
    const execution = await sandbox.runCode('def f():\n    return 1 / 0\nf()', { onError: (error) => void seen.push(error.name) });
    assert.equal(execution.error?.name, 'ZeroDivisionError');
    assert.equal(execution.error?.value, 'division by zero');
    assert.match(execution.error!.traceback, /line 2, in f/);
    assert.match(execution.error!.traceback, /ZeroDivisionError: division by zero/);
    assert.deepEqual(seen, ['ZeroDivisionError']);
    assert.deepEqual(execution.logs.stderr, [], 'the traceback is the error, not echoed on stderr');
  });

  test('env vars apply to one run only', async () => {
    const code = 'import os\nos.environ.get("CI_GREETING", "unset")';
    assert.equal((await sandbox.runCode(code, { envs: { CI_GREETING: 'hello' } })).text, 'hello');
    assert.equal((await sandbox.runCode(code)).text, 'unset');
    const sandboxVar = 'import os\nos.environ.get("CI_SANDBOX_VAR", "unset")';
    assert.equal((await sandbox.runCode(sandboxVar)).text, 'global', "the sandbox's envVars are the interpreter's");
    assert.equal((await sandbox.runCode(sandboxVar, { envs: { CI_SANDBOX_VAR: 'override' } })).text, 'override');
    assert.equal((await sandbox.runCode(sandboxVar)).text, 'global', "after the run, the sandbox's own value is back");
    // A run whose reader left at its timeoutMs: the next run still never sees its variables.
    await assert.rejects(sandbox.runCode('import time\ntime.sleep(600)', { envs: { CI_SANDBOX_VAR: 'leaked' }, timeoutMs: 1500 }), TimeoutError);
    assert.equal((await sandbox.runCode(sandboxVar)).text, 'global', 'the variables of a run that timed out are put back first');
    const quoted = `it's "quoted"\n\\`;
    const exact = await sandbox.runCode(`import os\nos.environ["CI_GREETING"] == ${JSON.stringify(quoted)}`, { envs: { CI_GREETING: quoted } });
    assert.equal(exact.text, 'True', 'a value reaches the code byte for byte, quotes and all');
  });

  test('a run past its timeoutMs fails with TimeoutError and is cancelled', async () => {
    const started = Date.now();
    // A silent run: the answer's headers must come at once (the SDK's timeoutMs starts with them; before them its
    // requestTimeoutMs, here 5 s, runs).
    await assert.rejects(sandbox.runCode('import time\ntime.sleep(600)', { timeoutMs: 2000, requestTimeoutMs: 5000 }), (error: Error) => {
      assert.ok(error instanceof TimeoutError);
      assert.match(error.message, /^Execution timed out/, 'the SDK had the answer (its headers) before its request timeout');
      return true;
    });
    assert.ok(Date.now() - started < 7000, `the run timed out after ${Date.now() - started} ms, not about 2 s`);
    // Had the sleep gone on, this run would wait behind it for minutes and time out too.
    const next = await sandbox.runCode('x', { timeoutMs: 45_000 });
    assert.equal(next.text, '41', 'the interrupted interpreter kept its state');
  });

  test('contexts have state of their own, can be listed, restarted and removed', async () => {
    const context = await sandbox.createCodeContext({ cwd: '/tmp' });
    assert.equal(context.language, 'python');
    assert.equal(context.cwd, '/tmp');
    assert.equal((await sandbox.runCode('x = "in the context"\nimport os\nos.getcwd()', { context })).text, '/tmp');
    assert.equal((await sandbox.runCode('x', { context })).text, 'in the context');
    assert.equal((await sandbox.runCode('x')).text, '41', 'the default context is untouched');

    const listed = await sandbox.listCodeContexts();
    assert.ok(listed.some((item) => item.id === context.id && item.cwd === '/tmp' && item.language === 'python'));
    assert.ok(listed.some((item) => item.id === 'default'));

    const sandboxVar = 'import os\nos.environ.get("CI_SANDBOX_VAR", "unset")';
    assert.equal((await sandbox.runCode(sandboxVar, { context })).text, 'global', "a context has the sandbox's envVars too");

    await sandbox.restartCodeContext(context);
    assert.equal((await sandbox.runCode('x', { context })).error?.name, 'NameError', 'a restarted context starts empty');
    assert.equal((await sandbox.runCode(sandboxVar, { context })).text, 'global', "and with the sandbox's envVars");

    await sandbox.removeCodeContext(context.id);
    assert.ok(!(await sandbox.listCodeContexts()).some((item) => item.id === context.id));
    await assert.rejects(sandbox.runCode('1', { context, ...NO_REQUEST_TIMER }), NotFoundError);

    await sandbox.restartCodeContext('default');
    assert.equal((await sandbox.runCode('x')).error?.name, 'NameError', 'the default context restarts too');
    assert.equal((await sandbox.runCode(sandboxVar)).text, 'global');
    await assert.rejects(sandbox.removeCodeContext('default'), SandboxError, 'the default context is not removed');
  });

  test("another sandbox's context is not found", async () => {
    // A session of the same user with a context of its own, made through sandboxd's API (no VM needed for that).
    const other = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: {} });
    assert.equal(other.status, 200, other.text);
    const context = await call(server, 'POST', `/v1/sessions/${other.body.session_id}/contexts`, { apiKey, json: {} });
    assert.equal(context.status, 201, context.text);
    await assert.rejects(sandbox.runCode('1', { context: { id: context.body.id, language: 'python', cwd: '/root' }, ...NO_REQUEST_TIMER }), NotFoundError);
    await assert.rejects(sandbox.restartCodeContext(context.body.id), NotFoundError);
  });

  test('JavaScript keeps its state per context; bash runs a fresh shell each run', async () => {
    const js = await sandbox.runCode('console.log([1, 2, 3].map((n) => n * 2).join(","))', { language: 'js' });
    assert.deepEqual(js.logs.stdout, ['2,4,6\n']);
    assert.equal(js.error, undefined);
    // The default JavaScript context keeps declarations and values; the last expression is the main result.
    await sandbox.runCode('const base = 40; let count = 1;', { language: 'javascript' });
    const sum = await sandbox.runCode('count += 1; base + count', { language: 'js' });
    assert.equal(sum.text, '42');
    assert.equal((await sandbox.runCode('new Promise((resolve) => setTimeout(() => resolve("later"), 100))', { language: 'js' })).text, 'later');
    const thrown = await sandbox.runCode('undefinedThing.call()', { language: 'javascript' });
    assert.equal(thrown.error?.name, 'ReferenceError');
    assert.match(thrown.error?.traceback ?? '', /undefinedThing/);
    // A context of its own: its state apart from the default one's, restarted empty, then removed.
    const own = await sandbox.createCodeContext({ language: 'js', cwd: '/tmp' });
    assert.equal(own.language, 'javascript');
    assert.equal((await sandbox.runCode('typeof base', { context: own })).text, 'undefined');
    assert.equal((await sandbox.runCode('process.cwd()', { context: own })).text, '/tmp');
    await sandbox.runCode('globalThis.mark = 7', { context: own });
    assert.equal((await sandbox.runCode('mark * 6', { context: own })).text, '42');
    assert.ok((await sandbox.listCodeContexts()).some((listed) => listed.id === own.id && listed.language === 'javascript'));
    await sandbox.restartCodeContext(own);
    assert.equal((await sandbox.runCode('typeof mark', { context: own })).text, 'undefined');
    await sandbox.removeCodeContext(own);
    await assert.rejects(sandbox.runCode('1', { context: own, ...NO_REQUEST_TIMER }), NotFoundError);
    // Its kernels are not the user's commands.
    assert.ok(!(await sandbox.commands.list()).some((listed) => listed.args.some((arg) => arg.includes('sandboxd-js-kernel'))));

    const bash = await sandbox.runCode('echo "$CI_NAME here"', { language: 'bash', envs: { CI_NAME: 'bash' } });
    assert.deepEqual(bash.logs.stdout, ['bash here\n']);
    await assert.rejects(sandbox.runCode('1', { language: 'r', ...NO_REQUEST_TIMER }), SandboxError);
  });

  test('running code takes the access token; contexts do not (as on E2B)', async () => {
    const headers = { 'content-type': 'application/json', 'e2b-sandbox-id': sandbox.sandboxId, 'e2b-sandbox-port': '49999' };
    const run = await fetch(`${opts.sandboxUrl}/execute`, { method: 'POST', headers, body: JSON.stringify({ code: '1' }) });
    assert.equal(run.status, 401);
    const list = await fetch(`${opts.sandboxUrl}/contexts`, { headers });
    assert.equal(list.status, 200);
    const elsewhere = await fetch(`${opts.sandboxUrl}/contexts`, { headers: { ...headers, 'e2b-sandbox-id': '00000000-0000-4000-8000-000000000000' } });
    assert.equal(elsewhere.status, 404);
  });
});
