/**
 * Background processes through HTTP against a real VM: a start streamed as NDJSON (start, output as it happens,
 * exit), re-attaching to output from an event number (JSON page, NDJSON, SSE with Last-Event-ID), stdin, signals,
 * kill (the VM and its other runs go on), timeouts, cwd and env, the list, and the errors: bad input 400, no stdin
 * or an ended process 409, another user's session or process 404. And a streamed execute: Python's and bash's output
 * as it is written, the result last.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

interface ProcessEvent {
  type: string;
  seq?: number;
  data?: string;
  events?: number;
  process?: Record<string, any>;
  execution?: Record<string, any>;
  execution_id?: number;
}

describe('background processes in a VM', () => {
  let server: TestServer;
  let apiKey: string;
  let otherKey: string;
  let sessionId: string;

  before(async () => {
    server = await startTestServer();
    ({ apiKey } = await server.createUserWithKey('runner', 'pro'));
    ({ apiKey: otherKey } = await server.createUserWithKey('peeker', 'pro'));
    sessionId = (await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1 } })).body.session_id;
  });
  after(() => server.close());

  const base = () => `/v1/sessions/${sessionId}/processes`;
  const start = async (json: Record<string, unknown>, key = apiKey) => call(server, 'POST', base(), { apiKey: key, json });

  /** Reads a streamed answer's events (NDJSON or SSE) until it ends; `stopWhen` may end it early. */
  async function readStream(res: Response, stopWhen?: (event: ProcessEvent) => boolean): Promise<{ events: ProcessEvent[]; ids: string[] }> {
    const events: ProcessEvent[] = [];
    const ids: string[] = [];
    const sse = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = res.body!.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const separator = sse ? '\n\n' : '\n';
      let cut: number;
      while ((cut = buffer.indexOf(separator)) !== -1) {
        const chunk = buffer.slice(0, cut);
        buffer = buffer.slice(cut + separator.length);
        if (sse) {
          const data = chunk.split('\n').find((line) => line.startsWith('data: '));
          const id = chunk.split('\n').find((line) => line.startsWith('id: '));
          if (id) ids.push(id.slice(4));
          if (data) events.push(JSON.parse(data.slice(6)));
        } else if (chunk.trim() !== '') events.push(JSON.parse(chunk));
        if (events.length > 0 && stopWhen?.(events.at(-1)!)) {
          await reader.cancel();
          return { events, ids };
        }
      }
    }
    return { events, ids };
  }
  const outputOf = (events: ProcessEvent[], type = 'stdout') =>
    events
      .filter((e) => e.type === type)
      .map((e) => e.data)
      .join('');

  test('a start streamed as NDJSON: the process, its output as it happens, stdout and stderr apart, and its exit', async () => {
    const res = await fetch(`${server.baseUrl}${base()}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ command: 'for i in 1 2 3; do echo line$i; sleep 0.2; done; echo oops >&2; exit 3', tag: 'counter' }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /application\/x-ndjson/);
    const { events } = await readStream(res);
    assert.equal(events[0]!.type, 'start');
    assert.equal(events[0]!.process!.status, 'running');
    assert.equal(events[0]!.process!.tag, 'counter');
    assert.ok(Number.isInteger(events[0]!.process!.pid));
    assert.equal(outputOf(events), 'line1\nline2\nline3\n');
    assert.equal(outputOf(events, 'stderr'), 'oops\n');
    // Output events are numbered in order, one per read of the agent.
    const seqs = events.filter((e) => e.seq !== undefined).map((e) => e.seq!);
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
    );
    const exit = events.at(-1)!;
    assert.equal(exit.type, 'exit');
    assert.equal(exit.process!.status, 'exited');
    assert.equal(exit.process!.exit_code, 3);
    assert.equal(exit.process!.signal, null);

    // Re-attached later: a JSON page from an event number holds only what follows it, then the exit.
    const id = events[0]!.process!.process_id;
    const page = await call(server, 'GET', `${base()}/${id}/output?after=2`, { apiKey });
    assert.equal(page.status, 200, page.text);
    assert.deepEqual(
      page.body.events.filter((e: ProcessEvent) => e.seq !== undefined).map((e: ProcessEvent) => e.seq),
      seqs.slice(2),
    );
    assert.equal(page.body.events.at(-1).type, 'exit');
    assert.equal(page.body.next_after, seqs.at(-1));
    // The same as an event stream resumed with Last-Event-ID, base64 on request.
    const sse = await fetch(`${server.baseUrl}${base()}/${id}/output?encoding=base64`, {
      headers: { 'x-api-key': apiKey, accept: 'text/event-stream', 'last-event-id': '1' },
    });
    const resumed = await readStream(sse);
    assert.deepEqual(resumed.ids, seqs.slice(1).map(String));
    assert.equal(
      resumed.events
        .filter((e) => e.type === 'stdout')
        .map((e) => Buffer.from(e.data!, 'base64').toString())
        .join(''),
      'line2\nline3\n',
    );
  });

  test('stdin: written in pieces and closed; cwd and env; a timeout kills the process group', async () => {
    const cat = await start({ argv: ['cat'], stdin: true });
    assert.equal(cat.status, 201, cat.text);
    const catId = cat.body.process_id;
    assert.equal((await call(server, 'POST', `${base()}/${catId}/stdin`, { apiKey, json: { data: 'hello ' } })).status, 200);
    const closed = await call(server, 'POST', `${base()}/${catId}/stdin`, {
      apiKey,
      json: { data_base64: Buffer.from('world\n').toString('base64'), eof: true },
    });
    assert.equal(closed.status, 200, closed.text);
    const res = await fetch(`${server.baseUrl}${base()}/${catId}/output`, { headers: { 'x-api-key': apiKey, accept: 'application/x-ndjson' } });
    const { events } = await readStream(res);
    assert.equal(outputOf(events), 'hello world\n');
    assert.equal(events.at(-1)!.process!.exit_code, 0);
    // Its stdin is closed, and it has ended: 409.
    assert.equal((await call(server, 'POST', `${base()}/${catId}/stdin`, { apiKey, json: { data: 'more' } })).status, 409);

    const env = await fetch(`${server.baseUrl}${base()}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ argv: ['sh', '-c', 'echo "$GREETING"; pwd'], env: { GREETING: 'hi there' }, cwd: '/tmp' }),
    });
    assert.equal(outputOf((await readStream(env)).events), 'hi there\n/tmp\n');

    // `python` is python3 (as python-is-python3 makes it), for code that runs `python script.py`.
    const python = await fetch(`${server.baseUrl}${base()}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ argv: ['python', '-c', 'import sys; print(sys.version_info[0] * 14)'] }),
    });
    assert.equal(outputOf((await readStream(python)).events), '42\n');

    // `user`: the image's unprivileged account, in its home with its environment; root files are closed to it.
    const asUser = await fetch(`${server.baseUrl}${base()}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ command: 'id -un; id -u; pwd; echo "$HOME $USER"; touch /root/x 2>/dev/null || echo denied', user: 'user' }),
    });
    const userRun = await readStream(asUser);
    assert.equal(outputOf(userRun.events), 'user\n1000\n/home/user\n/home/user user\ndenied\n');
    assert.equal(userRun.events[0]!.process!.user, 'user');
    assert.equal(userRun.events[0]!.process!.cwd, '/home/user');

    const slow = await start({ command: 'sleep 60', timeout_seconds: 1 });
    assert.equal(slow.status, 201, slow.text);
    const ended = await readStream(
      await fetch(`${server.baseUrl}${base()}/${slow.body.process_id}/output`, { headers: { 'x-api-key': apiKey, accept: 'application/x-ndjson' } }),
    );
    assert.equal(ended.events.at(-1)!.process!.timed_out, true);
    assert.equal(ended.events.at(-1)!.process!.status, 'exited');
  });

  test('a signal reaches the program (its trap runs); kill ends one process while the VM and its other runs go on', async () => {
    const trapped = await fetch(`${server.baseUrl}${base()}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ command: "trap 'echo got-term; exit 7' TERM; echo ready; while true; do sleep 0.1; done" }),
    });
    let processId = '';
    const signalled = await readStream(trapped, (event) => {
      if (event.type === 'start') processId = event.process!.process_id;
      if (event.type === 'stdout' && event.data!.includes('ready')) {
        void call(server, 'POST', `${base()}/${processId}/signal`, { apiKey, json: { signal: 'SIGTERM' } });
      }
      return false;
    });
    assert.match(outputOf(signalled.events), /ready\n.*got-term\n/s);
    assert.equal(signalled.events.at(-1)!.process!.exit_code, 7);
    // It has ended: another signal is 409; an unknown one is refused by the schema.
    assert.equal((await call(server, 'POST', `${base()}/${processId}/signal`, { apiKey, json: { signal: 'SIGTERM' } })).status, 409);
    assert.equal((await call(server, 'POST', `${base()}/${processId}/signal`, { apiKey, json: { signal: 'SIGBOGUS' } })).status, 422);

    const sleeper = await start({ command: 'sleep 1000' });
    assert.equal(sleeper.status, 201, sleeper.text);
    const listed = await call(server, 'GET', base(), { apiKey });
    assert.ok(listed.body.processes.some((p: any) => p.process_id === sleeper.body.process_id && p.status === 'running'));
    const killed = await call(server, 'DELETE', `${base()}/${sleeper.body.process_id}`, { apiKey });
    assert.equal(killed.status, 200, killed.text);
    assert.equal(killed.body.status, 'exited');
    assert.equal(killed.body.signal, 'SIGKILL');
    assert.equal((await call(server, 'GET', `${base()}/${sleeper.body.process_id}`, { apiKey })).body.status, 'exited');
    const still = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command: 'echo still here' } });
    assert.equal(still.body.stdout, 'still here\n');
  });

  test("a streamed execute: Python's and bash's lines arrive while the code runs, the result comes last", async () => {
    const streamed = async (json: Record<string, unknown>, key = apiKey) => {
      const res = await fetch(`${server.baseUrl}/execute`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify({ session_id: sessionId, ...json }),
      });
      if (res.status !== 200) return { status: res.status, events: [] as ProcessEvent[], at: [] as number[] };
      const at: number[] = [];
      const { events } = await readStream(res, () => (at.push(Date.now()), false));
      return { status: res.status, events, at };
    };
    const python = await streamed({ language: 'python', code: 'import time\nfor i in range(3):\n    print(i)\n    time.sleep(0.6)\n"done"', timeout: 60 });
    assert.equal(python.status, 200);
    assert.equal(python.events[0]!.type, 'start');
    const lines = python.events.flatMap((event, i) => (event.type === 'stdout' ? [{ data: event.data, at: python.at[i]! }] : []));
    // The stream adds up to the record's stdout, the last expression's value included (sent once the run ended).
    assert.equal(lines.map((line) => line.data).join(''), "0\n1\n2\n'done'\n");
    // (Python writes a line's text and its newline apart, unbuffered: pieces, not lines, arrive.)
    const when = (text: string) => lines.find((line) => line.data!.includes(text))!.at;
    assert.ok(when('2') - when('0') >= 900, `the lines came one by one: ${lines.map((l) => l.at - lines[0]!.at).join(', ')} ms`);
    const end = python.events.at(-1)!;
    assert.equal(end.type, 'end');
    assert.equal(end.execution!.stdout, "0\n1\n2\n'done'\n");
    assert.equal(end.execution!.execution_id, python.events[0]!.execution_id);
    assert.equal(end.execution!.results.at(-1).text, "'done'");

    const bash = await streamed({ language: 'bash', command: 'echo a; sleep 0.6; echo b >&2; exit 3' });
    assert.deepEqual(
      bash.events.map((event) => event.type),
      ['start', 'stdout', 'stderr', 'end'],
    );
    assert.equal(bash.events.at(-1)!.execution!.exit_code, 3);

    const slow = await streamed({ language: 'bash', command: 'echo begun; sleep 5', timeout: 1 });
    assert.deepEqual(
      slow.events.map((event) => event.type),
      ['start', 'stdout', 'timeout'],
      'the wait ran out: the run goes on, as a 408 says',
    );
    assert.equal(slow.events.at(-1)!.execution_id, slow.events[0]!.execution_id);
    assert.equal((await streamed({ language: 'python', code: '1' }, otherKey)).status, 404, "another user's session: refused before any stream");
  });

  test('bad input is 400 and leaves nothing; another user gets 404 for the session and its processes', async () => {
    const before = (await call(server, 'GET', base(), { apiKey })).body.processes.length;
    assert.equal((await start({ command: 'true', argv: ['true'] })).status, 400);
    assert.equal((await start({})).status, 400);
    const noDir = await start({ command: 'true', cwd: '/no/such/dir' });
    assert.equal(noDir.status, 400, noDir.text);
    const noProgram = await start({ argv: ['/no/such/program'] });
    assert.equal(noProgram.status, 400, noProgram.text);
    const noUser = await start({ command: 'true', user: 'nosuchuser', cwd: '/tmp' });
    assert.equal(noUser.status, 400, noUser.text);
    assert.match(noUser.text, /nosuchuser/);
    assert.equal((await start({ command: 'true', user: '../root' })).status, 422, 'a name no account may have is refused by the schema');
    assert.equal((await call(server, 'GET', base(), { apiKey })).body.processes.length, before);

    const mine = await start({ command: 'sleep 30' });
    const id = mine.body.process_id;
    assert.equal((await call(server, 'POST', `${base()}/${id}/stdin`, { apiKey, json: { data: 'x' } })).status, 409, 'started without stdin');
    for (const [method, url, json] of [
      ['GET', base()],
      ['POST', base(), { command: 'true' }],
      ['GET', `${base()}/${id}`],
      ['GET', `${base()}/${id}/output`],
      ['POST', `${base()}/${id}/stdin`, { data: 'x' }],
      ['POST', `${base()}/${id}/signal`, { signal: 'SIGKILL' }],
      ['DELETE', `${base()}/${id}`],
    ] as const) {
      const answer = await call(server, method, url, { apiKey: otherKey, ...(json ? { json } : {}) });
      assert.equal(answer.status, 404, `${method} ${url}: ${answer.text}`);
      assert.ok(!answer.text.includes(id) || url.includes(id), 'nothing of the process is shown');
    }
    assert.equal((await call(server, 'GET', `${base()}/proc_0000000000000000`, { apiKey })).status, 404);
    assert.equal((await call(server, 'GET', `${base()}/${id}`, { apiKey })).body.status, 'running', "the other user's requests changed nothing");
    await call(server, 'DELETE', `${base()}/${id}`, { apiKey });
  });

  test('cancel of one execution: a command killed, Python interrupted with its state kept; 409 once ended, 404 to another user', async () => {
    const execute = (json: Record<string, unknown>) => call(server, 'POST', '/v1/execute_async', { apiKey, json: { session_id: sessionId, ...json } });
    const waitRunning = async (id: number) => {
      for (let i = 0; i < 100; i++) {
        const record = await call(server, 'GET', `/v1/executions/${id}`, { apiKey });
        if (record.body.status === 'running') return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const command = await execute({ language: 'bash', command: 'sleep 30; echo never' });
    assert.equal(command.status, 200, command.text);
    await waitRunning(command.body.task_id);
    const otherUser = await call(server, 'POST', `/v1/executions/${command.body.task_id}/cancel`, { apiKey: otherKey });
    assert.equal(otherUser.status, 404, otherUser.text);
    const cancelled = await call(server, 'POST', `/v1/executions/${command.body.task_id}/cancel`, { apiKey });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'failed');
    assert.match(cancelled.body.error, /cancelled/);
    assert.ok(!cancelled.body.stdout?.includes('never'));
    assert.equal((await call(server, 'POST', `/v1/executions/${command.body.task_id}/cancel`, { apiKey })).status, 409, 'it has ended');

    assert.equal((await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, code: 'kept = 41' } })).status, 200);
    const python = await execute({ code: 'import pathlib, time\npathlib.Path("/tmp/py-started").touch()\ntime.sleep(120)' });
    // Cancelled once the code surely runs in the interpreter (not while the request is on its way).
    for (let i = 0; i < 100; i++) {
      const check = await call(server, 'POST', '/execute', {
        apiKey,
        json: { session_id: sessionId, language: 'bash', command: 'test -e /tmp/py-started && echo yes || true' },
      });
      if (check.body.stdout === 'yes\n') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const interrupted = await call(server, 'POST', `/v1/executions/${python.body.task_id}/cancel`, { apiKey });
    assert.equal(interrupted.status, 200, interrupted.text);
    assert.equal(interrupted.body.status, 'failed');
    const started = Date.now();
    const after = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, code: 'print(kept + 1)' } });
    assert.equal(after.body.stdout, '42\n', 'the interpreter kept its state');
    // Not behind the interrupted cell's 120 s: the interpreter was free at once (generous for a busy host).
    assert.ok(Date.now() - started < 60_000, `the next run waited ${Date.now() - started} ms`);
    assert.match(interrupted.body.error, /cancelled/);
  });
});
