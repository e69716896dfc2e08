/**
 * A process's output stream that breaks before the process's `exit` event is opened again from the last event seen
 * (`after`), against a local node:http server that cuts its answers on purpose: no event lost or repeated, at most
 * 5 resumes in a row, never after an abort; `processes.run` follows a broken start answer the same way, and
 * `session.commands` on top of them gets its output byte-exact. The real
 * server's `after` is exercised in the walk-through (walkthrough.test.ts) and the server's process tests.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { CommandExitError, MAX_OUTPUT_RESUMES, NetworkError, Sandboxd, withCamelCase, type ProcessEvent, type ProcessInfo } from '../src/index.ts';

type Reply = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

const OUTPUT = '/v1/sessions/s-1/processes/proc_1/output';

const processInfo = (changes: Partial<ProcessInfo> = {}): ProcessInfo =>
  withCamelCase({
    process_id: 'proc_1',
    session_id: 's-1',
    vm_id: 'vm-1',
    pid: 42,
    tag: null,
    command: 'make',
    argv: null,
    cwd: '/root',
    user: 'root',
    stdin: false,
    status: 'running',
    exit_code: null,
    signal: null,
    timed_out: false,
    error: null,
    started_at: '2026-11-26T00:00:00.000Z',
    ended_at: null,
    output_seq: 0,
    ...changes,
  });
const exited = (exitCode: number) => processInfo({ status: 'exited', exit_code: exitCode, ended_at: '2026-11-26T00:00:01.000Z' });

/** Starts an NDJSON answer and writes these lines (objects as JSON; a string as it is, e.g. half a line). */
function ndjson(res: http.ServerResponse, lines: (object | string)[]): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/x-ndjson' }).flushHeaders();
  for (const line of lines) res.write(typeof line === 'string' ? line : `${JSON.stringify(line)}\n`);
}

/** Cuts the connection once what was written has had time to arrive: the client sees a reset, not an end. */
const cut = (res: http.ServerResponse) => setTimeout(() => res.socket?.destroy(), 50);

const stdout = (seq: number, data: string) => ({ type: 'stdout', seq, data });

describe('output streams resume where they broke', () => {
  let server: http.Server;
  let baseUrl: string;
  let seen: { method: string; url: URL; at: number }[] = [];
  let reply: Reply = (_req, res) => res.writeHead(500).end();

  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ method: req.method!, url: new URL(req.url!, 'http://x'), at: Date.now() });
        reply(req, res, seen.length);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    seen = [];
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = () => new Sandboxd({ baseUrl, apiKey: 'sbx_sk_test', retryDelay: 10 });
  const collect = async (events: AsyncIterable<ProcessEvent>) => {
    const all: ProcessEvent[] = [];
    for await (const event of events) all.push(event);
    return all;
  };

  test('an answer cut mid-line is opened again after the last event: nothing lost, nothing twice', async () => {
    reply = (_req, res, n) => {
      if (n === 1) {
        ndjson(res, [stdout(1, 'one\n'), '\n', stdout(2, 'two\n'), '{"type":"stdout","seq":3,"da']);
        cut(res);
      } else {
        ndjson(res, [stdout(3, 'three\n'), { type: 'exit', process: exited(0) }]);
        res.end();
      }
    };
    const events = await collect(client().processes.output('s-1', 'proc_1'));
    assert.deepEqual(
      events.map((e) => (e.type === 'exit' ? 'exit' : e.data)),
      ['one\n', 'two\n', 'three\n', 'exit'],
    );
    assert.deepEqual(
      seen.map((s) => [s.url.pathname, s.url.searchParams.get('after')]),
      [
        [OUTPUT, '0'],
        [OUTPUT, '2'],
      ],
      'the second answer starts after event 2',
    );
    assert.ok(seen[1]!.at - seen[0]!.at < 1000, 'a short back-off');
  });

  test("a followed answer that ends without the exit event is resumed; with follow: false such an end is the answer's", async () => {
    reply = (_req, res, n) => {
      ndjson(res, n === 1 ? [stdout(5, 'a')] : [stdout(6, 'b'), { type: 'exit', process: exited(0) }]);
      res.end();
    };
    const followed = await collect(client().processes.output('s-1', 'proc_1', { after: 4 }));
    assert.deepEqual(
      followed.map((e) => e.type),
      ['stdout', 'stdout', 'exit'],
    );
    assert.deepEqual(
      seen.map((s) => s.url.searchParams.get('after')),
      ['4', '5'],
    );

    seen = [];
    const page = await collect(client().processes.output('s-1', 'proc_1', { follow: false }));
    assert.deepEqual(
      page.map((e) => e.data),
      ['a'],
    );
    assert.equal(seen.length, 1, 'what is there now, once');
  });

  test(`after ${MAX_OUTPUT_RESUMES} breaks in a row without an event, the break is thrown as a NetworkError`, async () => {
    reply = (_req, res, n) => {
      ndjson(res, n === 1 ? [stdout(1, 'x')] : []);
      cut(res);
    };
    const events: ProcessEvent[] = [];
    const error = await (async () => {
      for await (const event of client().processes.output('s-1', 'proc_1')) events.push(event);
    })().catch((e: unknown) => e);
    assert.ok(error instanceof NetworkError, String(error));
    assert.match(error.message, /broke off 6 times in a row/);
    assert.equal(events.length, 1);
    assert.equal(seen.length, 1 + MAX_OUTPUT_RESUMES, 'the first answer, then 5 resumes');
    assert.ok(
      seen.slice(2).every((s) => s.url.searchParams.get('after') === '1'),
      'each resume after the last event',
    );
    const waits = seen.slice(1).map((s, i) => s.at - seen[i]!.at);
    assert.ok(waits.at(-1)! >= 800 + 50 - 5, `the back-off grows (0.1 s, 0.2 s… each 50–100 %): ${waits.join(', ')} ms`);
  });

  test('an aborted signal ends the stream with its reason and is never resumed', async () => {
    reply = (_req, res) => ndjson(res, [stdout(1, 'x')]); // then silence: the stream stays open
    const controller = new AbortController();
    const reason = new Error('enough');
    const error = await (async () => {
      for await (const event of client().processes.output('s-1', 'proc_1', { signal: controller.signal }))
        if (event.type === 'stdout') controller.abort(reason);
    })().catch((e: unknown) => e);
    assert.equal(error, reason);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(seen.length, 1);
  });

  test("processes.run follows a start answer that breaks with the process's output from its last event", async () => {
    reply = (req, res) => {
      if (req.method === 'POST') {
        ndjson(res, [{ type: 'start', process: processInfo() }, stdout(1, 'one\n')]);
        cut(res);
      } else {
        ndjson(res, [stdout(2, 'two\n'), { type: 'exit', process: exited(0) }]);
        res.end();
      }
    };
    const run = await client().processes.run('s-1', 'make');
    assert.deepEqual([run.exitCode, run.stdout, run.process.status], [0, 'one\ntwo\n', 'exited']);
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url.pathname} ${s.url.searchParams.get('after') ?? ''}`.trim()),
      ['POST /v1/sessions/s-1/processes', `GET ${OUTPUT} 1`],
    );
  });

  test('session.commands reads through a resumed stream: a character the cut splits comes out whole; exit 3 rejects', async () => {
    // 'é' is two bytes, sent in two events; the first answer breaks between them.
    const e9 = Buffer.from('é');
    const b64 = (bytes: Buffer | string) => Buffer.from(bytes).toString('base64');
    reply = (req, res, n) => {
      if (req.method === 'POST') return res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(processInfo()));
      assert.equal(new URL(req.url!, 'http://x').searchParams.get('encoding'), 'base64');
      if (n === 2) {
        ndjson(res, [stdout(1, b64(Buffer.concat([Buffer.from('caf'), e9.subarray(0, 1)])))]);
        cut(res);
      } else {
        ndjson(res, [
          stdout(2, b64(e9.subarray(1))),
          stdout(3, b64('\n')),
          { type: 'stderr', seq: 4, data: b64('bad\n') },
          { type: 'exit', process: exited(3) },
        ]);
        res.end();
      }
    };
    const session = client().sessions.connect('s-1');
    const pieces: string[] = [];
    const error = await session.commands.run('make', { onStdout: (text) => void pieces.push(text) }).catch((e: unknown) => e);
    assert.ok(error instanceof CommandExitError, String(error));
    assert.deepEqual([error.exitCode, error.stdout, error.stderr, error.processId, error.pid], [3, 'café\n', 'bad\n', 'proc_1', 42]);
    assert.equal(pieces.join(''), 'café\n');
    assert.ok(!pieces.some((piece) => piece.includes('\uFFFD')), JSON.stringify(pieces));
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.url.pathname} ${s.url.searchParams.get('after') ?? ''}`.trim()),
      ['POST /v1/sessions/s-1/processes', `GET ${OUTPUT} 0`, `GET ${OUTPUT} 1`],
    );
  });
});
