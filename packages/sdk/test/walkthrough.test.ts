/**
 * The whole client on real VMs: a session, Python twice with state, rich results and contexts, a bash exit code, files in and out
 * byte for byte, files made, described, moved and removed, background processes (streamed output, stdin, signals, kill), E2B-style
 * commands (run, a background handle, re-attached from a second client, killed), an async run waited for, status, lists with the metadata filter, a terminal driven over its
 * WebSocket, a public share, and kill.
 * Needs the VM engine (QEMU; KVM when available).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { WebSocket } from 'ws';
import {
  CommandExitError,
  ExecutionError,
  NotFoundError,
  Sandboxd,
  SandboxdError,
  SessionError,
  type Session,
  type WebSocketConstructor,
} from '../src/index.ts';

/** The first call of a session starts its VM; allow for that. */
const FIRST_CALL = { timeout: 180 };

describe('walk-through on real VMs', () => {
  let server: TestServer;
  let client: Sandboxd;
  let session: Session;

  before(async () => {
    server = await startTestServer();
    client = new Sandboxd({ baseUrl: server.baseUrl, apiKey: (await server.createUserWithKey('walker', 'pro')).apiKey });
    session = await client.sessions.create({ vcpuCount: 2, metadata: { suite: 'walkthrough' } });
  });
  after(async () => {
    await session?.kill().catch(() => {});
    await server.close();
  });

  test('Python keeps its state between two executions', async () => {
    const first = await session.execute('x = 21\nprint("set")', FIRST_CALL);
    assert.equal(first.stdout, 'set\n');
    assert.equal(first.exit_code, 0);
    assert.equal(first.session_id, session.id);
    const second = await session.execute('print(x * 2)', { timeoutMs: 30_000 });
    assert.equal(second.stdout, '42\n');
    assert.equal(second.status, 'completed');
    assert.equal(second.vm_id, first.vm_id, 'the same VM');
    // The camelCase reading of the same answer, durations in milliseconds.
    assert.equal(second.vmId, first.vm_id);
    assert.equal(second.exitCode, 0);
    assert.equal(second.executionTimeMs, second.execution_time! * 1000);

    // Streamed: Python's output as it is printed (E2B's onStdout), the result as usual at the end.
    const seen: { text: string; at: number }[] = [];
    const streamed = await session.execute('import time\nfor i in range(3):\n    print(i)\n    time.sleep(0.5)\nx', {
      onStdout: (text) => seen.push({ text, at: Date.now() }),
    });
    // The last expression's value ends the output, as in the record's stdout (a notebook shows it).
    assert.equal(seen.map((piece) => piece.text).join(''), '0\n1\n2\n21\n');
    const when = (text: string) => seen.find((piece) => piece.text.includes(text))!.at;
    assert.ok(when('2') - when('0') >= 700, `the lines came while it ran: ${seen.map((p) => p.at - seen[0]!.at).join(', ')} ms`);
    assert.equal(streamed.stdout, '0\n1\n2\n21\n');
    assert.equal(streamed.results.at(-1)?.text, '21');
  });

  test('rich results: a matplotlib figure as PNG, a DataFrame as HTML, display(), the exception as a structure', async () => {
    const plot = await session.execute(
      [
        'import matplotlib.pyplot as plt',
        'import pandas as pd',
        'plt.plot([1, 3, 2])',
        'plt.title("three points")',
        'display({"shown": True})',
        'pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})',
      ].join('\n'),
      { timeout: 120 },
    );
    assert.equal(plot.status, 'completed', plot.stderr);
    assert.deepEqual(
      plot.results.map((r) => [r.is_main_result, Object.keys(r).sort().join(',')]),
      [
        [false, 'is_main_result,text'],
        [false, 'is_main_result,png,text'],
        [true, 'html,is_main_result,text'],
      ],
      'display() first, then the figure left open, then the last value',
    );
    assert.equal(plot.results[0]!.text, "{'shown': True}");
    const png = Buffer.from(plot.results[1]!.png!, 'base64');
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG image');
    assert.ok(png.length > 5_000, `a drawn plot, not an empty image (${png.length} bytes)`);
    assert.match(plot.results[2]!.html!, /<table[^>]*class="dataframe"[\s\S]*<td>x<\/td>/);
    assert.equal((await session.execute('import matplotlib.pyplot as plt\nlen(plt.get_fignums())')).stdout.trim(), '0', 'figures are closed once shown');

    const failed = await session.execute('def f():\n    return 1 / 0\nf()');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.exception?.name, 'ZeroDivisionError');
    assert.equal(failed.exception?.value, 'division by zero');
    assert.match(failed.exception!.traceback, /line 2, in f/);
    assert.deepEqual(failed.results, []);
    const record = await client.executions.get(plot.execution_id);
    assert.deepEqual(record.results, plot.results, 'the record keeps the results');
  });

  test('two Python contexts keep separate variables; restart clears one; another session cannot use it', async () => {
    const ctx = await session.createContext({ cwd: '/tmp' });
    assert.match(ctx.id, /^ctx_/);
    await session.execute('who = "default"');
    await session.execute('who = "second"\nimport os', { contextId: ctx.id });
    assert.equal((await session.execute('who')).stdout.trim(), "'default'");
    const inContext = await session.execute('print(who, os.getcwd())', { contextId: ctx.id });
    assert.equal(inContext.stdout.trim(), 'second /tmp');
    assert.equal(inContext.context_id, ctx.id);
    assert.deepEqual(
      (await session.listContexts()).map((c) => c.id),
      ['default', ctx.id],
    );
    await session.restartContext(ctx.id);
    const cleared = await session.execute('who', { contextId: ctx.id });
    assert.equal(cleared.exception?.name, 'NameError', 'the restarted context starts empty');
    assert.equal((await session.execute('who')).stdout.trim(), "'default'", 'the default context goes on');
    const other = await client.sessions.create();
    // An execute's 404 is a SessionError (as the published clients read it), naming the context.
    await assert.rejects(
      other.execute('1', { contextId: ctx.id }),
      /SessionError: context ctx_\w+ in session [\w-]+ not found/,
      "a context is its session's only",
    );
    await other.kill().catch(() => {});
    await session.deleteContext(ctx.id);
    await assert.rejects(session.execute('1', { contextId: ctx.id }), SessionError);
    await assert.rejects(session.restartContext(ctx.id), NotFoundError);
  });

  test('bash passes its exit code through; throwOnError makes it an ExecutionError', async () => {
    const result = await session.execute('echo out; echo err >&2; exit 3', { language: 'bash' });
    assert.equal(result.exit_code, 3);
    assert.equal(result.stdout, 'out\n');
    assert.equal(result.stderr, 'err\n');
    const error = await session.execute('exit 5', { language: 'bash', throwOnError: true }).catch((e: unknown) => e);
    assert.ok(error instanceof ExecutionError, String(error));
    assert.equal(error.exitCode, 5);
    assert.equal(typeof error.executionId, 'number');
  });

  test('upload and download are byte-exact', async () => {
    const bytes = new Uint8Array(Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(300_000)]));
    const uploaded = await session.upload(bytes, '/tmp/blob.bin');
    assert.equal(uploaded.size, bytes.length);
    const sum = await session.execute('sha256sum /tmp/blob.bin | cut -d" " -f1', { language: 'bash' });
    assert.equal(sum.stdout.trim(), createHash('sha256').update(bytes).digest('hex'));
    const back = await session.download('/tmp/blob.bin');
    assert.equal(back.length, bytes.length);
    assert.ok(Buffer.from(back).equals(Buffer.from(bytes)));
    await session.upload('hello from the client\n', 'notes/hello.txt');
    assert.equal(new TextDecoder().decode(await session.download('/root/notes/hello.txt')), 'hello from the client\n');
    await assert.rejects(session.download('/tmp/does-not-exist'), NotFoundError);
  });

  test('a large file goes up from disk and streams back down to disk, byte-exact', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-sdk-stream-'));
    try {
      // 48 MiB of random bytes, written in chunks (never whole in this process either).
      const source = path.join(dir, 'big.bin');
      const sent = createHash('sha256');
      const out = fs.openSync(source, 'w');
      for (let i = 0; i < 48; i++) {
        const chunk = randomBytes(2 ** 20);
        sent.update(chunk);
        fs.writeSync(out, chunk);
      }
      fs.closeSync(out);
      const uploaded = await session.upload(await fs.openAsBlob(source), '/root/big.bin');
      assert.equal(uploaded.size, 48 * 2 ** 20);
      const target = path.join(dir, 'back.bin');
      await pipeline(Readable.fromWeb((await session.downloadStream('/root/big.bin')) as WebReadableStream<Uint8Array>), fs.createWriteStream(target));
      const received = createHash('sha256');
      await pipeline(fs.createReadStream(target), received);
      assert.equal(received.digest('hex'), sent.digest('hex'));
      await assert.rejects(session.downloadStream('/root/does-not-exist'), NotFoundError, 'a missing file rejects before any byte');
      await session.remove('/root/big.bin');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('mkdir, stat, exists, rename and remove act on the VM; a missing path is a NotFoundError', async () => {
    assert.equal(await session.mkdir('tree/a/b'), true, 'made, with its parents');
    assert.equal(await session.mkdir('/root/tree/a/b'), false, 'already there');
    const dir = await session.stat('tree/a');
    assert.deepEqual([dir.name, dir.path, dir.type], ['a', '/root/tree/a', 'directory']);
    await session.upload('moved\n', '/root/tree/a/b/old.txt');
    const moved = await session.rename('tree/a/b/old.txt', 'tree/new.txt');
    assert.deepEqual([moved.path, moved.type, moved.size], ['/root/tree/new.txt', 'file', 6]);
    assert.equal(await session.exists('tree/a/b/old.txt'), false);
    assert.equal(await session.exists('/root/tree/new.txt'), true);
    assert.deepEqual(
      (await client.files.list(session.id, 'tree')).entries.map((entry) => `${entry.type} ${entry.name}`),
      ['directory a', 'file new.txt'],
    );
    // Several files in one call (parents made), then the tree listed two levels deep.
    const written = await session.writeFiles([
      { path: 'tree/a/b/one.txt', data: 'one\n' },
      { path: '/root/tree/c/two.bin', data: new Uint8Array([0, 1, 2, 255]), mode: 0o600 },
    ]);
    assert.deepEqual(written, [
      { path: '/root/tree/a/b/one.txt', size: 4 },
      { path: '/root/tree/c/two.bin', size: 4 },
    ]);
    assert.deepEqual([...(await session.download('tree/c/two.bin'))], [0, 1, 2, 255]);
    assert.equal((await session.stat('tree/c/two.bin')).mode, 0o600);
    const deep = await client.files.list(session.id, 'tree', { depth: 2 });
    assert.deepEqual(
      deep.entries.map((entry) => entry.path.replace('/root/tree/', '')),
      ['a', 'a/b', 'c', 'c/two.bin', 'new.txt'],
    );
    assert.equal(deep.truncated, false);
    const notEmpty = await session.remove('tree').catch((e: unknown) => e);
    assert.ok(notEmpty instanceof SandboxdError, String(notEmpty));
    assert.deepEqual([notEmpty.status, notEmpty.code], [409, 'CONFLICT']);
    assert.equal(await session.remove('tree', { recursive: true }), true);
    assert.equal(await session.exists('tree'), false);
    assert.equal(await session.remove('tree'), false, 'nothing left to remove');
    await assert.rejects(session.stat('/root/tree'), NotFoundError);
  });

  test('watch: a loop over a directory sees create, write and remove, and leaving it ends the watch', async () => {
    await session.mkdir('watched');
    const seen: string[] = [];
    const stop = new AbortController();
    const watching = (async () => {
      for await (const event of session.watch('watched', { recursive: true, signal: stop.signal })) {
        seen.push(`${event.type} ${event.path ?? ''}`);
        if (event.type === 'start') await session.execute('echo hi > /root/watched/note.txt && rm /root/watched/note.txt', { language: 'bash' });
        if (event.type === 'remove') break;
      }
    })();
    await watching;
    stop.abort();
    assert.deepEqual(
      seen.filter((line) => !line.startsWith('write')),
      ['start /root/watched', 'create /root/watched/note.txt', 'remove /root/watched/note.txt'],
    );
    assert.ok(seen.includes('write /root/watched/note.txt'), seen.join(', '));
    await assert.rejects(session.watch('no-such-dir').next(), NotFoundError);
    await session.remove('watched', { recursive: true });
  });

  test('processes: a run hands output over as it arrives; one in the background takes stdin, a signal, and is killed', async () => {
    // Output reaches the callback while the process still runs: it waits for a file the callback's reaction makes.
    const seen: string[] = [];
    const run = await session.processes.run('echo first; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo second; echo warn >&2', {
      onStdout: (text) => {
        seen.push(text);
        if (text.includes('first')) void session.processes.start('touch /tmp/go');
      },
    });
    assert.equal(run.exitCode, 0);
    assert.equal(run.stdout, 'first\nsecond\n');
    assert.equal(run.stderr, 'warn\n');
    assert.ok(seen.length >= 2, `output arrived in pieces: ${JSON.stringify(seen)}`);

    const cat = await session.processes.start(null, { argv: ['cat'], stdin: true, tag: 'echoer' });
    await session.processes.sendStdin(cat.process_id, 'typed ');
    await session.processes.sendStdin(cat.process_id, new TextEncoder().encode('bytes\n'), { eof: true });
    const events = [];
    for await (const event of session.processes.output(cat.process_id)) events.push(event);
    assert.equal(
      events
        .filter((e) => e.type === 'stdout')
        .map((e) => e.data)
        .join(''),
      'typed bytes\n',
    );
    assert.equal(events.at(-1)?.type, 'exit');

    // Signalled once its trap is in place (it says so): a SIGTERM before that would end bash itself.
    const trap = await session.processes.start("trap 'exit 7' TERM; echo ready; while true; do sleep 0.1; done");
    for await (const event of session.processes.output(trap.process_id)) {
      if (event.type === 'stdout' && event.data?.includes('ready')) await session.processes.signal(trap.process_id, 'SIGTERM');
      if (event.type === 'exit') break;
    }
    assert.equal((await session.processes.get(trap.process_id)).exit_code, 7);

    const sleeper = await session.processes.start('sleep 1000');
    assert.ok((await session.processes.list()).some((p) => p.process_id === sleeper.process_id && p.status === 'running'));
    const killed = await session.processes.kill(sleeper.process_id);
    assert.deepEqual([killed.status, killed.signal], ['exited', 'SIGKILL']);

    // Aborting a run kills its process.
    const controller = new AbortController();
    let started = '';
    const aborted = session.processes.run('sleep 1000', { signal: controller.signal, onStart: (p) => ((started = p.process_id), controller.abort()) });
    await assert.rejects(aborted);
    for (let i = 0; i < 50 && (await session.processes.get(started)).status === 'running'; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await session.processes.get(started)).signal, 'SIGKILL');
    await assert.rejects(session.processes.get('proc_0000000000000000'), NotFoundError);
  });

  test("commands as E2B's: lines as they come, a failing exit rejects, stdin to one in the background, another re-attached from a second client and killed", async () => {
    const lines: { line: string; at: number }[] = [];
    const looped = await session.commands.run('for i in 1 2 3; do echo $i; sleep 0.3; done', {
      onStdout: (text) => lines.push(...text.split('\n').flatMap((line) => (line ? [{ line, at: Date.now() }] : []))),
    });
    assert.deepEqual(
      lines.map((l) => l.line),
      ['1', '2', '3'],
    );
    assert.ok(lines[2]!.at - lines[0]!.at >= 400, `the lines came one by one while it ran: ${lines.map((l) => l.at - lines[0]!.at).join(', ')} ms`);
    assert.deepEqual([looped.exitCode, looped.stdout, looped.stderr, looped.error], [0, '1\n2\n3\n', '', undefined]);
    assert.match(looped.processId, /^proc_/);

    const failed = await session.commands.run('echo oops >&2; exit 3').catch((e: unknown) => e);
    assert.ok(failed instanceof CommandExitError, String(failed));
    assert.ok(failed instanceof ExecutionError, 'a CommandExitError is an ExecutionError');
    assert.deepEqual([failed.exitCode, failed.stderr, failed.result.exitCode], [3, 'oops\n', 3]);

    const asUser = await session.commands.run('id -un; pwd', { user: 'user' });
    assert.equal(asUser.stdout, 'user\n/home/user\n', "E2B's default user: its name and home");

    const cat = await session.commands.run('cat', { background: true, stdin: true });
    assert.equal(typeof cat.pid, 'number');
    await cat.sendStdin('hi\n');
    await cat.closeStdin();
    const echoed = await cat.wait();
    assert.deepEqual([echoed.exitCode, echoed.stdout, cat.stdout, cat.exitCode], [0, 'hi\n', 'hi\n', 0]);

    // Kept in the background, found in the list, re-attached from a second client with the same key, killed there.
    const sleeper = await session.commands.run('sleep 30', { background: true, tag: 'sleeper' });
    assert.ok((await session.commands.list()).some((p) => p.process_id === sleeper.processId && p.tag === 'sleeper'));
    const second = new Sandboxd({ baseUrl: server.baseUrl, apiKey: client.transport.settings.apiKey });
    const commands = second.sessions.connect(session.id).commands;
    const attached = await commands.connect(sleeper.processId);
    assert.equal(attached.pid, sleeper.pid);
    assert.equal(await commands.kill(sleeper.processId), true);
    // A killed command's wait() rejects, as a failed exit does: exit code -1 and the signal.
    for (const handle of [attached, sleeper]) {
      const killed = await handle.wait().catch((e: unknown) => e);
      assert.ok(killed instanceof CommandExitError, String(killed));
      assert.deepEqual([killed.exitCode, killed.signal, killed.error], [-1, 'SIGKILL', 'killed by SIGKILL']);
    }
    assert.ok(!(await session.commands.list()).some((p) => p.process_id === sleeper.processId), 'the list holds running commands');
    assert.equal(await commands.kill(sleeper.processId), false, 'it had ended');
    assert.equal(await commands.kill('proc_0000000000000000'), false, 'no such command');

    // An aborted signal kills the command in the VM.
    const aborted = await session.commands.run('sleep 1000', { signal: AbortSignal.timeout(1000), tag: 'aborted' }).catch((e: unknown) => e);
    assert.equal((aborted as Error).name, 'TimeoutError');
    const record = (await session.processes.list()).find((p) => p.tag === 'aborted');
    assert.deepEqual([record?.status, record?.signal], ['exited', 'SIGKILL']);
  });

  test('an async run is waited for by polling its record', async () => {
    const run = await session.executeAsync('import time\ntime.sleep(1.5)\nprint("done", x)');
    assert.equal(run.sessionId, session.id);
    const started = Date.now();
    const record = await run.wait();
    assert.ok(Date.now() - started >= 1000);
    assert.equal(record.is_complete, true);
    assert.equal(record.status, 'completed');
    assert.equal(record.serialized_stdout, 'done 21\n');
    assert.equal((await client.executions.get(run.id)).id, run.id);
    const mine = await session.executions();
    assert.ok(mine.some((e) => e.id === run.id));
    // Pages of the real server: 3 at a time, walked by the iterator, are the records one big page has, in order.
    const whole = await client.executions.list({ sessionId: session.id, limit: 100 });
    assert.ok(whole.length > 3, `more records than one page of 3: ${whole.length}`);
    const walked: number[] = [];
    for await (const record of client.executions.list({ sessionId: session.id, limit: 3 })) walked.push(record.id);
    assert.deepEqual(
      walked,
      whole.map((record) => record.id),
    );

    // One run cancelled: a command stops, the session's VM goes on.
    const long = await session.executeAsync('sleep 60', { language: 'bash' });
    const cancelled = await long.cancel();
    assert.deepEqual([cancelled.status, cancelled.is_complete], ['failed', true]);
    assert.match(cancelled.error ?? '', /cancelled/);
    await assert.rejects(long.cancel(), (error: unknown) => error instanceof SandboxdError && error.status === 409);
    assert.equal((await session.execute('print("on")')).stdout, 'on\n');
  });

  test('status, VMs and sandboxes (filtered by metadata) show the running VM', async () => {
    const status = await session.status();
    assert.equal(status.vm_alive, true);
    assert.equal(status.vm_status, 'active');
    assert.ok((status.expires_in_seconds ?? 0) > 0);
    const vms = await client.vms.list({ status: 'active' });
    assert.ok(vms.some((vm) => vm.vm_id === status.vm_id));
    const matching = await client.sandboxes.list({ metadata: { suite: 'walkthrough' } });
    assert.deepEqual(
      matching.map((s) => s.sandbox_id),
      [status.vm_id],
    );
    assert.deepEqual(await client.sandboxes.list({ metadata: { suite: 'other' } }), []);
    // A lifetime changed while it runs: the VM's end moves to an hour from now.
    const before = Date.now();
    const relifed = await client.vms.setLifetime(status.vm_id!, 3600);
    assert.equal(relifed.vm_id, status.vm_id);
    const expiresAt = Date.parse(relifed.expires_at!);
    assert.ok(expiresAt >= before + 3_600_000 && expiresAt <= Date.now() + 3_600_000, relifed.expires_at!);
    // The same through the session, E2B's way (milliseconds, rounded up to seconds): two hours from now.
    const again = Date.now();
    const timedOut = await session.setTimeout(7_200_000 - 1);
    assert.equal(timedOut.vm_id, status.vm_id);
    const movedTo = Date.parse(timedOut.expires_at!);
    assert.ok(movedTo >= again + 7_200_000 - 1000 && movedTo <= Date.now() + 7_200_000, timedOut.expires_at!);
    await assert.rejects(session.setTimeout(0), RangeError);
  });

  test('a terminal: sized at creation, typed into, exits with its code', async () => {
    const created = await session.createTerminal({ cols: 90, rows: 20, command: 'stty size; read x; echo got-$x; exit 4' });
    assert.match(created.pty_id, /^pty-/);
    assert.equal(created.status, 'running');
    let output = '';
    const terminal = await session.attachTerminal(created.pty_id, {
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      onData: (bytes) => (output += Buffer.from(bytes).toString('utf8')),
    });
    const seen = async (text: string) => {
      const deadline = Date.now() + 20_000;
      while (!output.includes(text)) {
        if (Date.now() > deadline) assert.fail(`no ${JSON.stringify(text)} in ${JSON.stringify(output)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await seen('20 90');
    terminal.write('abc\r');
    await seen('got-abc');
    assert.deepEqual(await terminal.exit, { exitCode: 4, signal: null });
    const listed = await client.terminals.list({ sessionId: session.id });
    assert.equal(listed.find((t) => t.pty_id === created.pty_id)?.exit_code, 4);
    await client.terminals.delete({ sessionId: session.id }, created.pty_id);
    await assert.rejects(client.terminals.get({ sessionId: session.id }, created.pty_id), NotFoundError);
  });

  test('a public share opens a port to anyone until it is deleted', async () => {
    await session.execute('cd /tmp && mkdir -p site && echo shared-page > site/index.html && (nohup python3 -m http.server 8700 -d site >/dev/null 2>&1 &)', {
      language: 'bash',
    });
    const share = await client.shares.create({ sessionId: session.id, port: 8700, isPublic: true });
    assert.match(share.share_id, /^shr_/);
    assert.equal(share.link_expires_at, null);
    let page: Response | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      page = await fetch(share.url);
      if (page.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(page?.status, 200);
    assert.equal(await page?.text(), 'shared-page\n');
    assert.ok((await client.shares.list({ sessionId: session.id })).some((s) => s.share_id === share.share_id));
    await client.shares.delete(share.share_id);
    assert.notEqual((await fetch(share.url)).status, 200);
    await assert.rejects(client.shares.get(share.share_id), NotFoundError);
  });

  test('await using kills the VM when its block ends; kill ends the VM; a second kill is a SessionError', async () => {
    const killed = await session.kill();
    assert.equal(killed.success, true);
    let status = await session.status();
    assert.equal(status.vm_alive, false);
    // A new VM for the session (the next run starts it), then one held by `await using`: killed as the block ends.
    assert.equal((await session.execute('print("again")', FIRST_CALL)).stdout, 'again\n');
    {
      await using held = session;
      assert.equal((await held.status()).vm_alive, true);
    }
    status = await session.status();
    assert.equal(status.vm_status, 'killed');
    assert.equal(status.vm_alive, false);
    assert.equal(status.expires_in_seconds, 0);
    await assert.rejects(session.kill(), SessionError);
    await session[Symbol.asyncDispose](); // a VM already gone is fine
  });
});
