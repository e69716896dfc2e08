/**
 * The `sandbox` command on real VMs: exec with state across invocations, exit codes passed through, rich results
 * saved and Python contexts,
 * run FILE by extension, code from stdin, files in and out byte for byte (a directory too; --progress lines on
 * stderr apart from the data), files listed,
 * described, made, moved and removed in the VM, status, ls with a metadata filter, kill.
 * Needs the VM engine (QEMU; KVM when available).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { BIN, makeHome, runCli, startCli, waitFor, type CliHome } from './run-cli.ts';

/**
 * Runs the command given in argv on a pseudo-terminal of 33x111 (as a person's terminal would), types into it,
 * resizes it (the kernel sends SIGWINCH), and prints everything the command wrote, then `cli-exit N`.
 */
const TTY_DRIVER = String.raw`
import fcntl, os, pty, select, struct, sys, termios, time

def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))

pid, master = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
set_size(master, 33, 111)
seen = b''

def wait_for(marker, timeout=60):
    global seen
    end = time.time() + timeout
    while marker not in seen:
        if time.time() > end:
            sys.stdout.write(seen.decode(errors='replace'))
            sys.exit('timed out waiting for %r' % marker)
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break

os.write(master, b'echo "size-1 $(stty size)"\r')
wait_for(b'size-1 33 111')
os.write(master, b"sh -c 'trap \"echo interrupted-$((129+1))\" INT; sleep 30 & wait'\r")
time.sleep(2)
os.write(master, b'\x03')
wait_for(b'interrupted-130')
set_size(master, 40, 120)
time.sleep(1)
os.write(master, b'echo "size-2 $(stty size)"\r')
wait_for(b'size-2 40 120')
os.write(master, b'exit 6\r')
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors='replace'))
sys.stdout.write('\ncli-exit %d\n' % os.waitstatus_to_exitcode(status))
`;

describe('sandbox on real VMs', () => {
  let server: TestServer;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;
  let sessionId: string;

  before(async () => {
    server = await startTestServer();
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: (await server.createUserWithKey('erin', 'pro')).apiKey });
    const created = await runCli(['--json', 'create', '--vcpus', '1', '--metadata', 'suite=cli-vm'], env);
    assert.equal(created.code, 0, created.stderr);
    sessionId = created.json.session_id;
  });
  after(async () => {
    await runCli(['kill', sessionId], env);
    home.remove();
    await server.close();
  });

  test('exec keeps Python state between invocations in the current session', async () => {
    const first = await runCli(['exec', '--timeout', '180', 'x = 20'], env);
    assert.equal(first.code, 0, first.stderr);
    const second = await runCli(['exec', 'print(x + 22)'], env);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, '42\n');
  });

  test('the exit code of a bash command is the exit code of sandbox exec, with output on stdout and stderr', async () => {
    const res = await runCli(['exec', '--language', 'bash', 'echo out; echo err >&2; exit 7'], env);
    assert.equal(res.code, 7);
    assert.equal(res.stdout, 'out\n');
    assert.match(res.stderr, /err\n/);
    const json = await runCli(['--json', 'exec', '-l', 'bash', 'echo hi; exit 3'], env);
    assert.equal(json.code, 3);
    assert.equal(json.json.stdout, 'hi\n');
    assert.equal(json.json.exit_code, 3);
    assert.equal(json.json.session_id, sessionId);
    const python = await runCli(['exec', 'raise ValueError("boom")'], env);
    assert.notEqual(python.code, 0);
    assert.match(python.stderr, /ValueError: boom/);
  });

  test('exec - reads the code from stdin; a run longer than --timeout is followed to its end', async () => {
    const stdin = await runCli(['exec', '-'], env, 'for i in range(3):\n    print(i)\n');
    assert.equal(stdin.stdout, '0\n1\n2\n');
    const long = await runCli(['exec', '--timeout', '1', 'import time; time.sleep(3); print("late")'], env);
    assert.equal(long.code, 0, long.stderr);
    assert.equal(long.stdout, 'late\n');
  });

  test('exec --results-dir saves a plot as PNG; contexts create, exec --context, restart and rm', async () => {
    const dir = path.join(home.home, 'results');
    const plot = await runCli(['exec', '--timeout', '120', '--results-dir', dir, 'import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nprint("drawn")'], env);
    assert.equal(plot.code, 0, plot.stderr);
    assert.equal(plot.stdout, 'drawn\n');
    const [saved] = fs.readdirSync(dir);
    assert.match(saved!, /^execution-\d+-1\.png$/);
    assert.deepEqual([...fs.readFileSync(path.join(dir, saved!)).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assert.match(plot.stderr, /result 1: saved .*\.png/);

    const created = await runCli(['contexts', 'create', '--cwd', '/tmp'], env);
    assert.equal(created.code, 0, created.stderr);
    const contextId = created.stdout.trim();
    assert.match(contextId, /^ctx_/);
    assert.equal((await runCli(['exec', '--context', contextId, 'import os\nwhere = os.getcwd()'], env)).code, 0);
    assert.equal((await runCli(['exec', '--context', contextId, 'print(where)'], env)).stdout, '/tmp\n');
    assert.match((await runCli(['exec', 'print(where)'], env)).stderr, /NameError/, 'the default context has its own variables');
    const listed = await runCli(['--json', 'contexts'], env);
    assert.deepEqual(
      listed.json.map((c: { id: string }) => c.id),
      ['default', contextId],
    );
    assert.equal((await runCli(['contexts', 'restart', contextId], env)).code, 0);
    assert.match((await runCli(['exec', '--context', contextId, 'print(where)'], env)).stderr, /NameError/, 'restarted: its variables are gone');
    assert.equal((await runCli(['contexts', 'rm', contextId], env)).code, 0);
    assert.equal((await runCli(['exec', '--context', contextId, '1'], env)).code, 4, 'a deleted context is not found');
  });

  test('run FILE picks the language from the extension', async () => {
    const py = path.join(home.home, 'hello.py');
    const sh = path.join(home.home, 'hello.sh');
    fs.writeFileSync(py, 'import sys\nprint("py", sys.version_info[0])\n');
    fs.writeFileSync(sh, 'echo "sh $((6 * 7))"\nexit 4\n');
    const a = await runCli(['run', py], env);
    assert.equal(a.stdout, 'py 3\n');
    const b = await runCli(['run', sh], env);
    assert.equal(b.stdout, 'sh 42\n');
    assert.equal(b.code, 4);
    fs.writeFileSync(path.join(home.home, 'x.rb'), 'puts 1');
    assert.equal((await runCli(['run', path.join(home.home, 'x.rb')], env)).code, 2);
  });

  test('upload and download are byte-exact; a directory is uploaded as a tree', async () => {
    const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(200_000)]);
    const local = path.join(home.home, 'blob.bin');
    fs.writeFileSync(local, bytes);
    // --progress on a pipe: plain progress lines on stderr (the last one whole), the result on stdout as without it.
    const up = await runCli(['--json', '--progress', 'upload', local, '/tmp/blob.bin'], env);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(up.json.size, bytes.length);
    assert.match(up.stderr, /^blob\.bin {2}100% \[=+\] 195\.6 KiB \/ 195\.6 KiB {2}[\d.]+ (?:[KMG]i)?B\/s {2}in \d+s\n$/m);
    assert.ok(!up.stderr.includes('\r'), 'no carriage returns off a terminal');
    const sum = await runCli(['exec', '-l', 'bash', 'sha256sum /tmp/blob.bin'], env);
    assert.equal(sum.stdout.split(' ')[0], createHash('sha256').update(bytes).digest('hex'));
    const back = path.join(home.home, 'back.bin');
    const down = await runCli(['--json', 'download', '/tmp/blob.bin', back], env);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(down.json.size, bytes.length);
    assert.equal(down.stderr, '', 'no progress on a pipe unless asked for');
    assert.ok(fs.readFileSync(back).equals(bytes));
    const piped = await runCli(['download', '--progress', '/tmp/blob.bin', '-'], env);
    assert.equal(piped.code, 0, piped.stderr);
    assert.ok(piped.stdoutBytes.equals(bytes), 'the file, streamed to stdout, with the progress apart on stderr');
    assert.match(piped.stderr, /^blob\.bin {2}100% \[=+\] 195\.6 KiB \/ 195\.6 KiB {2}[\d.]+ (?:[KMG]i)?B\/s {2}in \d+s\n$/m);

    const tree = path.join(home.home, 'tree');
    fs.mkdirSync(path.join(tree, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(tree, 'a.txt'), 'A');
    fs.writeFileSync(path.join(tree, 'sub', 'b.txt'), 'B');
    const dir = await runCli(['upload', tree, '/root/tree'], env);
    assert.equal(dir.code, 0, dir.stderr);
    const listing = await runCli(['exec', '-l', 'bash', 'cat /root/tree/a.txt /root/tree/sub/b.txt'], env);
    assert.equal(listing.stdout, 'AB');
    const missing = await runCli(['download', '/tmp/nope', path.join(home.home, 'nope.bin')], env);
    assert.equal(missing.code, 4);
    assert.deepEqual(
      fs.readdirSync(home.home).filter((name) => name.includes('nope')),
      [],
      'a failed download leaves no file, whole or partial',
    );
  });

  test('files mkdir, stat, ls, mv and rm change the VM; a missing path exits 4 with "not found"', async () => {
    const made = await runCli(['--json', 'files', 'mkdir', 'work/a/b'], env);
    assert.equal(made.code, 0, made.stderr);
    assert.equal(made.json.created, true);
    assert.equal((await runCli(['files', 'mkdir', '--no-parents', '/root/nowhere/x'], env)).code, 4);
    const stat = await runCli(['files', 'stat', 'work/a'], env);
    assert.match(stat.stdout, /^path: +\/root\/work\/a\ntype: +directory\n/);

    const moved = await runCli(['--json', 'files', 'mv', 'work/a/b', 'work/c'], env);
    assert.equal(moved.code, 0, moved.stderr);
    assert.deepEqual([moved.json.path, moved.json.type], ['/root/work/c', 'directory']);
    const clash = await runCli(['files', 'mv', 'work/c', 'work/a'], env);
    assert.equal(clash.code, 1);
    assert.match(clash.stderr, /exists.*\[CONFLICT\]/);
    // work/a is empty now (b moved out): --force may replace it with the directory c.
    assert.equal((await runCli(['files', 'mv', '--force', 'work/c', 'work/a'], env)).code, 0);
    const listing = await runCli(['files', 'ls', 'work'], env);
    assert.match(listing.stdout, /^TYPE +SIZE +MODE +NAME\ndirectory +\d+ +0\d{3} +a\n$/);
    await runCli(['files', 'mkdir', 'work/a/inner'], env);
    const deep = await runCli(['files', 'ls', '--depth', '2', 'work'], env);
    assert.match(deep.stdout, /^TYPE +SIZE +MODE +NAME\ndirectory +\d+ +0\d{3} +a\ndirectory +\d+ +0\d{3} +a\/inner\n$/);

    const notEmpty = await runCli(['files', 'rm', 'work'], env);
    assert.equal(notEmpty.code, 1);
    assert.match(notEmpty.stderr, /\[CONFLICT\]/);
    const removed = await runCli(['--json', 'files', 'rm', '-r', 'work'], env);
    assert.equal(removed.json.removed, true, removed.stderr);
    const missing = await runCli(['files', 'stat', 'work'], env);
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /not found/i);
  });

  test('files watch prints changes as they happen (--json lines); Ctrl-C ends it with exit 0', async () => {
    assert.equal((await runCli(['files', 'mkdir', 'cli-watched'], env)).code, 0);
    const watch = startCli(['--json', 'files', 'watch', 'cli-watched', '-r'], env);
    let stdout = '';
    watch.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await waitFor(() => stdout, /"type":"start"/, 60_000);
    assert.equal((await runCli(['exec', '-l', 'bash', 'mkdir /root/cli-watched/sub && echo x > /root/cli-watched/sub/f.txt'], env)).code, 0);
    await waitFor(() => stdout, /"path":"\/root\/cli-watched\/sub\/f\.txt"/, 30_000);
    watch.child.kill('SIGINT');
    const ended = await watch.done;
    assert.equal(ended.code, 0, ended.stderr);
    const events = ended.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(events[0], { type: 'start', path: '/root/cli-watched', recursive: true });
    assert.ok(
      events.some((e) => e.type === 'create' && e.path === '/root/cli-watched/sub' && e.is_dir === true),
      ended.stdout,
    );
    assert.equal((await runCli(['files', 'watch', '/root/nope-not-here'], env)).code, 4, 'a missing directory: not found');
  });

  test('exec --stream prints output as it arrives and exits with the code; Ctrl-C interrupts the process in the VM; Ctrl-C cancels a Python exec', async () => {
    const res = await runCli(['exec', '--stream', 'echo a; sleep 0.2; echo b; echo warn >&2; exit 5'], env);
    assert.equal(res.code, 5, res.stderr);
    assert.equal(res.stdout, 'a\nb\n');
    assert.match(res.stderr, /warn\n/);
    const json = await runCli(['--json', 'exec', '--stream', 'echo hi'], env);
    assert.deepEqual([json.code, json.json.stdout, json.json.exit_code, json.json.status], [0, 'hi\n', 0, 'exited']);

    // The remote program's trap runs on the SIGINT that Ctrl-C of the command line sends it.
    const run = startCli(['exec', '--stream', "trap 'echo interrupted; exit 130' INT; echo ready; while true; do sleep 0.1; done"], env);
    let stdout = '';
    run.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await waitFor(() => stdout, /ready/, 60_000);
    run.child.kill('SIGINT');
    const ended = await run.done;
    assert.equal(ended.code, 130, ended.stderr);
    assert.match(ended.stdout, /ready\ninterrupted\n/);

    // Python through exec prints as it runs (a streamed execute); Ctrl-C cancels that run only: the interpreter is
    // interrupted and keeps its variables.
    const python = startCli(['exec', 'kept = 7\nimport time\nprint("go")\ntime.sleep(60)'], env);
    let printed = '';
    python.child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    await waitFor(() => printed, /go\n/, 60_000);
    python.child.kill('SIGINT');
    const cancelled = await python.done;
    assert.notEqual(cancelled.code, 0, 'a cancelled run is a failed one');
    assert.match(cancelled.stderr, /cancelling the run in the VM/);
    assert.equal((await runCli(['exec', 'print(kept * 6)'], env)).stdout, '42\n', 'the VM and its interpreter live on');
  });

  test('ps start, ls, logs, signal and kill: a background process in the VM', async () => {
    const started = await runCli(['ps', 'start', '--tag', 'ticker', 'for i in 1 2 3; do echo tick$i; done; sleep 1000'], env);
    assert.equal(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    assert.match(id, /^proc_[0-9a-f]{16}$/);
    const listed = await runCli(['ps'], env);
    assert.match(listed.stdout, new RegExp(`^PROCESS +STATUS +EXIT +PID +TAG +COMMAND\\n(.*\\n)*${id} +running +\\d+ +ticker +for i in`, 'm'));
    for (let i = 0; i < 50 && !(await runCli(['ps', 'logs', id], env)).stdout.includes('tick3'); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal((await runCli(['ps', 'logs', id], env)).stdout, 'tick1\ntick2\ntick3\n');
    assert.equal((await runCli(['ps', 'signal', id, 'bogus'], env)).code, 2, 'a usage mistake');
    const stopped = await runCli(['ps', 'signal', id, 'stop'], env);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, /Sent SIGSTOP/);
    const killed = await runCli(['--json', 'ps', 'kill', id], env);
    assert.deepEqual([killed.code, killed.json.status, killed.json.signal], [0, 'exited', 'SIGKILL']);
    // Following an ended process prints what it kept and exits with its code (128 + 9).
    const logs = await runCli(['ps', 'logs', '-f', id], env);
    assert.deepEqual([logs.code, logs.stdout], [137, 'tick1\ntick2\ntick3\n']);
    assert.equal((await runCli(['ps', 'kill', 'proc_0000000000000000'], env)).code, 4);
  });

  test('url prints the preview address of a port (--direct: the host-name one)', async () => {
    const url = await runCli(['url', '8000'], env);
    assert.equal(url.code, 0, url.stderr);
    assert.equal(url.stdout.trim(), `${server.config.server.publicUrl}/v1/app/${sessionId}/8000/`);
    const json = await runCli(['--json', 'url', '8000'], env);
    assert.equal(json.json.port, 8000);
    assert.equal(json.json.status, 'active');
    const direct = await runCli(['url', '--direct', '8000'], env);
    assert.equal(direct.stdout.trim(), `http://${json.json.vm_id}-8000.localhost:${new URL(server.config.server.publicUrl).port}/`);
  });

  test('shell with piped input types it, ends with Ctrl-D, exits with the remote code (--json: as a record) and removes its terminal', async () => {
    const res = await runCli(['shell'], env, 'echo "hi-$((2+3)) [$(stty size)]"\nexit 3\n');
    assert.equal(res.code, 3, res.stderr);
    assert.match(res.stdout, /hi-5 \[24 80\]/, 'not a TTY here: the remote terminal is 80x24');
    const command = await runCli(['shell', '--command', 'echo from-command; exit 0'], env);
    assert.equal(command.code, 0, command.stderr);
    assert.match(command.stdout, /from-command/);
    // --json: the terminal's output on stderr, one record of how it ended on stdout.
    const json = await runCli(['--json', 'shell', '--command', 'echo from-json; exit 4'], env);
    assert.equal(json.code, 4, json.stderr);
    assert.deepEqual([json.json.exit_code, json.json.ended, json.json.kept, json.json.session_id], [4, true, false, sessionId]);
    assert.match(json.stderr, /from-json/);
    const left = await call(server, 'GET', `/v1/sessions/${sessionId}/pty/sessions`, { apiKey: env.SANDBOXD_API_KEY as string });
    assert.deepEqual(left.body.sessions, [], 'the terminals it opened are gone');
  });

  test('shell on a real local terminal: raw mode (Ctrl-C reaches the remote program), its size, SIGWINCH resizes', { timeout: 120_000 }, async () => {
    // The driver puts `sandbox shell` on a pseudo-terminal of its own and types into it.
    const res = await runCli(['shell'], env, undefined, ['python3', '-c', TTY_DRIVER, process.execPath, BIN]);
    assert.equal(res.code, 0, `driver failed: ${res.stderr}\n--- terminal output ---\n${res.stdout.slice(-2000)}`);
    assert.match(res.stdout, /size-1 33 111/);
    assert.match(res.stdout, /interrupted-130/, 'Ctrl-C interrupted the remote sleep, not the local command');
    assert.match(res.stdout, /size-2 40 120/);
    assert.match(res.stdout, /cli-exit 6/);
  });

  test('snapshot, clone, pause, resume and snapshots: a clone has the state, a paused VM comes back', async () => {
    assert.equal((await runCli(['exec', 'marker = "cli-snapshot"'], env)).code, 0);
    const snapshot = await runCli(['--json', 'snapshot', '--name', 'cli-snap', '--metadata', 'by=cli'], env);
    assert.equal(snapshot.code, 0, snapshot.stderr);
    assert.deepEqual([snapshot.json.name, snapshot.json.metadata], ['cli-snap', { by: 'cli' }]);
    const cloned = await runCli(['--json', 'clone', '--snapshot', 'cli-snap'], env);
    assert.equal(cloned.code, 0, cloned.stderr);
    const cloneSession = cloned.json.clones[0].session_id as string;
    const inClone = await runCli(['exec', '--session', cloneSession, 'print(marker)'], env);
    assert.deepEqual([inClone.code, inClone.stdout], [0, 'cli-snapshot\n']);
    const paused = await runCli(['--json', 'pause'], env);
    assert.deepEqual([paused.code, paused.json.status], [0, 'paused'], paused.stderr);
    const resumed = await runCli(['resume'], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /: active \(\d+ s of lifetime left\)/);
    assert.equal((await runCli(['exec', 'print(marker)'], env)).stdout, 'cli-snapshot\n', 'the resumed VM has its state');
    const listed = await runCli(['snapshots', 'ls'], env);
    assert.match(listed.stdout, /cli-snap/);
    assert.equal((await runCli(['kill', cloneSession], env)).code, 0);
    // The session's own VM builds its disk on the snapshot now: deleting it is refused until that VM ends.
    const refused = await runCli(['snapshots', 'rm', snapshot.json.snapshot_id], env);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /builds its disk on snapshot cli-snap/);
  });

  test('status, ls with a metadata filter, kill', async () => {
    const status = await runCli(['--json', 'status'], env);
    assert.equal(status.json.vm_alive, true);
    assert.equal(status.json.vm_status, 'active');
    const ls = await runCli(['--json', 'ls', '--metadata', 'suite=cli-vm'], env);
    // The clone of the test before has its source session's metadata too; it was killed.
    assert.deepEqual(
      ls.json.filter((s: any) => s.status === 'active').map((s: any) => s.sandbox_id),
      [status.json.vm_id],
    );
    assert.deepEqual((await runCli(['--json', 'ls', '--metadata', 'suite=other'], env)).json, []);
    const table = await runCli(['ls'], env);
    assert.match(table.stdout, /suite=cli-vm/);
    const kill = await runCli(['--json', 'kill'], env);
    assert.equal(kill.code, 0, kill.stderr);
    assert.equal(kill.json.vm_id, status.json.vm_id);
    const after = await runCli(['--json', 'status'], env);
    assert.equal(after.json.vm_status, 'killed');
  });
});
