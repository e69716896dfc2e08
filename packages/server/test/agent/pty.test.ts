/** Terminals through the real agent: a real pseudo-terminal, input, resizes, scrollback on re-attach, kills, limits. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PtyExit } from '@sandboxd/agent/protocol';
import { AgentOperationError, type AgentClient } from '../../src/agent/index.ts';
import type { PtyStream } from '../../src/agent/pty.ts';
import { waitUntil } from '../helpers/wait.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

/** An attachment that records what it received. */
interface Watch {
  stream: PtyStream;
  text(): string;
  exit: Promise<PtyExit>;
  /** Resolves once the output so far matches `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

async function watch(client: AgentClient, id: string): Promise<Watch> {
  const chunks: Buffer[] = [];
  let exited: (exit: PtyExit) => void = () => undefined;
  const exit = new Promise<PtyExit>((resolve) => (exited = resolve));
  const stream = await client.attachPty(id, { onOutput: (chunk) => chunks.push(Buffer.from(chunk)), onExit: (value) => exited(value) });
  const text = () => Buffer.concat(chunks).toString('utf8');
  return {
    stream,
    text,
    exit,
    waitFor: (pattern, timeoutMs = 10_000) =>
      waitUntil(`terminal output matching ${pattern}`, async () => (pattern.test(text()) ? text() : null), timeoutMs).catch((error: Error) => {
        throw new Error(`${error.message}; the output so far ends with ${JSON.stringify(text().slice(-300))}`);
      }),
  };
}

function rejectsWith(code: string) {
  return (error: unknown) => {
    assert.ok(error instanceof AgentOperationError, String(error));
    assert.equal(error.code, code);
    return true;
  };
}

describe('agent terminals (PTY)', () => {
  let agent: AgentFixture;
  let client: AgentClient;
  before(async () => {
    agent = await startAgent(['--no-prestart-python']);
    client = await agent.connect();
  });
  after(() => agent.stop());

  it('runs a shell on a real terminal of the asked size, with the given environment, and reports its exit', async () => {
    const info = await client.createPty({
      argv: ['bash', '--norc', '--noprofile', '-i'],
      cols: 100,
      rows: 30,
      env: { GREETING: 'hello-pty', PS1: '$ ' },
      cwd: '/tmp',
    });
    assert.match(info.id, /^pty-[0-9a-f]{16}$/);
    assert.equal(info.status, 'running');
    assert.ok(info.pid > 0);
    assert.deepEqual([info.cols, info.rows, info.cwd, info.command], [100, 30, '/tmp', ['bash', '--norc', '--noprofile', '-i']]);
    const term = await watch(client, info.id);
    term.stream.write(Buffer.from('echo "[$GREETING] [$(stty size)] [$TERM] [$(pwd)]"; tty\r'));
    const output = await term.waitFor(/\[hello-pty\] \[30 100\] \[xterm-256color\] \[\/tmp\][\s\S]*\/dev\/pts\/\d+/);
    assert.ok(output.includes('echo "[$GREETING]'), 'the terminal echoes what was typed');
    term.stream.write(Buffer.from('exit 5\r'));
    assert.deepEqual(await term.exit, { exitCode: 5, signal: null });
    await term.stream.closed;
    const after = await client.getPty(info.id);
    assert.equal(after.status, 'exited');
    assert.equal(after.exitCode, 5);
    assert.ok(after.exitedAt);
    assert.ok(
      (await client.listPtys()).some((terminal) => terminal.id === info.id),
      'an ended terminal stays listed until it is killed',
    );
    await client.killPty(info.id);
  });

  it('resizes through the attachment and through the resize call; the program gets SIGWINCH', async () => {
    const script =
      'import os, signal, time\nsignal.signal(signal.SIGWINCH, lambda *a: print("size %d x %d" % tuple(os.get_terminal_size()), flush=True))\nprint("ready", flush=True)\ntime.sleep(60)';
    const info = await client.createPty({ argv: ['python3', '-c', script], cols: 80, rows: 24 });
    const term = await watch(client, info.id);
    await term.waitFor(/ready/);
    term.stream.resize(132, 43);
    await term.waitFor(/size 132 x 43/);
    const resized = await client.resizePty(info.id, 90, 20);
    assert.deepEqual([resized.cols, resized.rows], [90, 20]);
    await term.waitFor(/size 90 x 20/);
    const killed = await client.killPty(info.id);
    assert.equal(killed.signal, 'SIGHUP');
    assert.equal(killed.exitCode, null);
    assert.deepEqual(await term.exit, { exitCode: null, signal: 'SIGHUP' });
  });

  it('keeps running when detached; a new attachment gets the scrollback first, bounded by its size', async () => {
    const info = await client.createPty({
      argv: ['sh', '-c', 'echo first-line; read line; echo "got $line"; echo end-marker; sleep 60'],
      cols: 80,
      rows: 24,
      scrollbackBytes: 1024,
    });
    const first = await watch(client, info.id);
    await first.waitFor(/first-line/);
    assert.equal((await client.getPty(info.id)).attachments, 1);
    first.stream.detach();
    await first.stream.closed;
    await waitUntil('the detach to reach the agent', async () => (await client.getPty(info.id)).attachments === 0);
    const second = await watch(client, info.id);
    await second.waitFor(/first-line/);
    second.stream.write(Buffer.from('x'.repeat(3000) + '\r'));
    await second.waitFor(/got x{3000}/);
    second.stream.detach();
    const third = await watch(client, info.id);
    const replay = await third.waitFor(/x+\r\nend-marker/);
    assert.ok(Buffer.byteLength(replay) <= 1024, `scrollback is bounded (${Buffer.byteLength(replay)} bytes)`);
    assert.ok(!replay.includes('first-line'), 'the oldest output fell out of the scrollback');
    await client.killPty(info.id);
  });

  it('attaching to an ended terminal gives its scrollback and exit at once; a signal is reported by name', async () => {
    const info = await client.createPty({ argv: ['sh', '-c', 'echo before-the-end; kill -TERM $$'], cols: 80, rows: 24 });
    await waitUntil('the program to end', async () => (await client.getPty(info.id)).status === 'exited');
    const term = await watch(client, info.id);
    assert.deepEqual(await term.exit, { exitCode: null, signal: 'SIGTERM' });
    assert.match(term.text(), /before-the-end/);
    await client.killPty(info.id);
  });

  it('kill ends a program that ignores SIGHUP with SIGKILL, and forgets the terminal', async () => {
    const info = await client.createPty({ argv: ['sh', '-c', 'trap "" HUP; echo armed; while :; do sleep 1; done'], cols: 80, rows: 24 });
    const term = await watch(client, info.id);
    await term.waitFor(/armed/);
    const started = Date.now();
    const killed = await client.killPty(info.id);
    assert.equal(killed.signal, 'SIGKILL');
    assert.ok(Date.now() - started >= 1500, 'SIGKILL comes after the grace period');
    await term.stream.closed;
    await assert.rejects(client.getPty(info.id), rejectsWith('TERMINAL_NOT_FOUND'));
    await assert.rejects(client.killPty(info.id), rejectsWith('TERMINAL_NOT_FOUND'));
    await assert.rejects(client.attachPty(info.id, { onOutput: () => undefined, onExit: () => undefined }), rejectsWith('TERMINAL_NOT_FOUND'));
  });

  it('refuses a missing program, a missing directory and bad sizes before starting anything', async () => {
    const before = (await client.listPtys()).length;
    await assert.rejects(client.createPty({ argv: ['no-such-program-xyz'], cols: 80, rows: 24 }), rejectsWith('COMMAND_NOT_FOUND'));
    await assert.rejects(client.createPty({ argv: ['sh'], cols: 80, rows: 24, cwd: '/no/such/dir' }), rejectsWith('INVALID_CWD'));
    await assert.rejects(client.createPty({ argv: ['sh'], cols: 0, rows: 24 }), rejectsWith('BAD_REQUEST'));
    await assert.rejects(client.createPty({ argv: [], cols: 80, rows: 24 }), rejectsWith('BAD_REQUEST'));
    await assert.rejects(client.createPty({ argv: ['sh'], cols: 80, rows: 24, scrollbackBytes: 10 }), rejectsWith('BAD_REQUEST'));
    assert.equal((await client.listPtys()).length, before);
  });

  it('keeps at most 32 terminals: an ended one makes room, running ones do not', { timeout: 120_000 }, async () => {
    const running = [];
    for (let i = 0; i < 31; i++) running.push(await client.createPty({ argv: ['sleep', '120'], cols: 80, rows: 24 }));
    const ended = await client.createPty({ argv: ['true'], cols: 80, rows: 24 });
    await waitUntil('the short program to end', async () => (await client.getPty(ended.id)).status === 'exited');
    const replacement = await client.createPty({ argv: ['sleep', '120'], cols: 80, rows: 24 });
    await assert.rejects(client.getPty(ended.id), rejectsWith('TERMINAL_NOT_FOUND'));
    await assert.rejects(client.createPty({ argv: ['sleep', '120'], cols: 80, rows: 24 }), rejectsWith('TOO_MANY_TERMINALS'));
    await Promise.all([...running, replacement].map((terminal) => client.killPty(terminal.id)));
    assert.equal((await client.listPtys()).length, 0);
  });
});
