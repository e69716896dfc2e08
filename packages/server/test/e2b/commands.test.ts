/**
 * `sandbox.commands` and `sandbox.pty` of the unmodified `e2b` SDK against the facade's `process.Process` service:
 * streamed output, exit codes as CommandExitError, background commands killed, stdin, list, connect after
 * disconnect, users, cwd and envs, stream deadlines, and a terminal (input, resize, kill). One sandbox for the file.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CommandExitError, NotFoundError, Sandbox, TimeoutError } from 'e2b';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';

/** Resolves once `predicate` holds (polled), or rejects after `timeoutMs` with what `seen` shows. */
async function until(predicate: () => boolean, what: string, timeoutMs = 20_000, seen: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${seen() ? `; saw ${JSON.stringify(seen().slice(-2000))}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('e2b commands and pty', () => {
  let server: TestServer;
  let sandbox: Sandbox;
  let opts: { apiKey: string; apiUrl: string; sandboxUrl: string };
  before(async () => {
    server = await startTestServer();
    const { apiKey } = await server.createUserWithKey('e2b-commands', 'pro');
    opts = { apiKey, apiUrl: `${server.baseUrl}/e2b`, sandboxUrl: `${server.baseUrl}/e2b/sandbox` };
    sandbox = await Sandbox.create(opts);
  });
  after(async () => {
    await sandbox?.kill().catch(() => undefined);
    await server?.close();
  });

  test('onStdout gets output while the command still runs', async () => {
    const chunks: { text: string; at: number }[] = [];
    const result = await sandbox.commands.run('echo a; sleep 1; echo b', { onStdout: (text) => void chunks.push({ text, at: Date.now() }) });
    const doneAt = Date.now();
    assert.equal(result.stdout, 'a\nb\n');
    assert.equal(chunks[0]?.text, 'a\n');
    assert.ok(doneAt - chunks[0]!.at >= 700, `the first chunk came ${doneAt - chunks[0]!.at} ms before the end, not about a second`);
  });

  test('a non-zero exit is a CommandExitError with the exit code and both outputs', async () => {
    const stderr: string[] = [];
    await assert.rejects(sandbox.commands.run('echo out; echo err >&2; exit 3', { onStderr: (text) => void stderr.push(text) }), (error: unknown) => {
      assert.ok(error instanceof CommandExitError);
      assert.equal(error.exitCode, 3);
      assert.equal(error.stdout, 'out\n');
      assert.equal(error.stderr, 'err\n');
      assert.equal(error.error, 'exit status 3');
      return true;
    });
    assert.equal(stderr.join(''), 'err\n');
  });

  test('user, cwd and envs', async () => {
    assert.equal((await sandbox.commands.run('whoami; echo $HOME; pwd')).stdout, 'user\n/home/user\n/home/user\n');
    assert.equal((await sandbox.commands.run('whoami; pwd', { user: 'root' })).stdout, 'root\n/root\n');
    assert.equal((await sandbox.commands.run('pwd', { cwd: '/tmp' })).stdout, '/tmp\n');
    assert.equal((await sandbox.commands.run('echo "$GREETING"', { envs: { GREETING: 'hi there' } })).stdout, 'hi there\n');
  });

  test('a background command is listed with what started it, then killed', async () => {
    const handle = await sandbox.commands.run('sleep 600', { background: true, envs: { MARK: 'listed' }, cwd: '/tmp' });
    const listed = (await sandbox.commands.list()).find((info) => info.pid === handle.pid);
    assert.deepEqual(listed && { cmd: listed.cmd, args: listed.args, envs: listed.envs, cwd: listed.cwd }, {
      cmd: '/bin/bash',
      args: ['-l', '-c', 'sleep 600'],
      envs: { MARK: 'listed' },
      cwd: '/tmp',
    });
    assert.equal(await handle.kill(), true);
    await assert.rejects(handle.wait(), (error: unknown) => {
      assert.ok(error instanceof CommandExitError);
      assert.equal(error.exitCode, -1);
      assert.equal(error.error, 'signal: killed');
      return true;
    });
    assert.equal(await sandbox.commands.kill(handle.pid), false, 'a process that ended is not found');
    assert.ok(!(await sandbox.commands.list()).some((info) => info.pid === handle.pid));
  });

  test('commands.kill ends a background command by pid', async () => {
    const handle = await sandbox.commands.run('sleep 600', { background: true });
    assert.equal(await sandbox.commands.kill(handle.pid), true);
    await assert.rejects(handle.wait(), CommandExitError);
  });

  test('stdin: sendStdin and closeStdin reach the program', async () => {
    const handle = await sandbox.commands.run('cat', { background: true, stdin: true });
    await handle.sendStdin('first line\n');
    await sandbox.commands.sendStdin(handle.pid, 'second ');
    await sandbox.commands.sendStdin(handle.pid, 'line\n');
    await handle.closeStdin();
    const result = await handle.wait();
    assert.equal(result.stdout, 'first line\nsecond line\n');
  });

  test('connect after disconnect gets the output from its start', async () => {
    const handle = await sandbox.commands.run('echo first; sleep 2; echo second', { background: true });
    await handle.disconnect();
    const seen: string[] = [];
    const again = await sandbox.commands.connect(handle.pid, { onStdout: (text) => void seen.push(text) });
    const result = await again.wait();
    assert.equal(result.stdout, 'first\nsecond\n');
    assert.equal(seen.join(''), 'first\nsecond\n');
  });

  test('a pid this sandbox does not have is not found', async () => {
    assert.equal(await sandbox.commands.kill(999_999), false);
    await assert.rejects(sandbox.commands.connect(999_999), NotFoundError);
    await assert.rejects(sandbox.commands.sendStdin(999_999, 'x'), NotFoundError);
  });

  test('timeoutMs ends the stream with a TimeoutError, not the command', async () => {
    const started = Date.now();
    await assert.rejects(sandbox.commands.run('sleep 3; echo done > /tmp/after-timeout', { timeoutMs: 1000 }), TimeoutError);
    assert.ok(Date.now() - started < 2900, 'the stream ended at its deadline');
    // The command itself goes on past its stream's deadline, as in envd: its file appears a little later.
    let written = '';
    for (let tries = 0; tries < 40 && written !== 'done\n'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      written = (await sandbox.commands.run('cat /tmp/after-timeout 2>/dev/null || true')).stdout;
    }
    assert.equal(written, 'done\n');
  });

  test('pty: input, resize, list and kill', async () => {
    let output = '';
    const decoder = new TextDecoder();
    const terminal = await sandbox.pty.create({ cols: 80, rows: 24, onData: (data) => void (output += decoder.decode(data, { stream: true })) });
    assert.ok(terminal.pid > 0);
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode('echo $((6*7))\n'));
    await until(
      () => /[\r\n]42\r?\n/.test(output),
      '42 from the terminal',
      20_000,
      () => output,
    );
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode('echo "me:$(id -un)"\n'));
    await until(
      () => output.includes('me:user'),
      'the terminal to run as user',
      20_000,
      () => output,
    );
    await sandbox.pty.resize(terminal.pid, { cols: 100, rows: 30 });
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode('stty size\n'));
    await until(
      () => /[\r\n]30 100\r?\n/.test(output),
      'the new size from stty',
      20_000,
      () => output,
    );
    // Disconnected and connected again by pid: the terminal's recent output first, then what it prints next.
    await terminal.disconnect();
    let again = '';
    const againDecoder = new TextDecoder();
    const reattached = await sandbox.pty.connect(terminal.pid, { onData: (data) => void (again += againDecoder.decode(data, { stream: true })) });
    await until(
      () => again.includes('30 100'),
      'the scrollback after connect',
      20_000,
      () => again,
    );
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode('echo "after:$((2+3))"\n'));
    await until(
      () => again.includes('after:5'),
      'live output after connect',
      20_000,
      () => again,
    );
    const listed = (await sandbox.commands.list()).find((info) => info.pid === terminal.pid);
    assert.deepEqual(listed && { cmd: listed.cmd, args: listed.args }, { cmd: '/bin/bash', args: ['-i', '-l'] });
    assert.equal(await sandbox.pty.kill(terminal.pid), true);
    await assert.rejects(reattached.wait(), (error: unknown) => {
      assert.ok(error instanceof CommandExitError);
      assert.equal(error.exitCode, -1);
      return true;
    });
    assert.ok(!(await sandbox.commands.list()).some((info) => info.pid === terminal.pid));
  });

  test("pty: the shell's exit code ends the handle", async () => {
    const terminal = await sandbox.pty.create({ cols: 80, rows: 24, onData: () => undefined, user: 'root', cwd: '/tmp' });
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode('[ "$(id -un):$PWD" = root:/tmp ] && exit 5; exit 9\n'));
    await assert.rejects(terminal.wait(), (error: unknown) => {
      assert.ok(error instanceof CommandExitError);
      assert.equal(error.exitCode, 5, 'a root shell in /tmp exits with 5');
      assert.equal(error.error, 'exit status 5');
      return true;
    });
  });

  test("another sandbox's processes are not this one's", async () => {
    const other = await Sandbox.create(opts);
    try {
      const theirs = await other.commands.run('sleep 600', { background: true });
      assert.ok(!(await sandbox.commands.list()).some((info) => info.pid === theirs.pid), "this sandbox's list leaves out the other's process");
      await assert.rejects(sandbox.commands.connect(theirs.pid), NotFoundError);
      assert.equal(await sandbox.commands.kill(theirs.pid), false);
      assert.ok(
        (await other.commands.list()).some((info) => info.pid === theirs.pid),
        'the other process still runs',
      );
    } finally {
      await other.kill();
    }
  });
});
