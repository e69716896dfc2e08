// test-lane: light (no server, no VM: the progress line drawn on a recorder, with the clock and timers moved by hand)
/**
 * The progress of `sandbox upload`, `download` and `template build` (src/progress.ts): when it is shown, the line it
 * draws, how often (at most ten times a second on a terminal, a line a second on a pipe), that it ends with a final
 * line or is cleared and never left half-drawn, and that an upload's bytes are counted as the SDK reads them.
 * The real commands with `--progress` are in cli-vm.test.ts (upload, download) and templates.test.ts (a build).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, mock, test, afterEach, beforeEach } from 'node:test';
import { multipartBody } from '../../sdk/src/multipart.ts';
import { explain } from '../src/errors.ts';
import { InterruptedError, interruptible } from '../src/interrupt.ts';
import { byteLine, byteProgress, countedBlob, formatBytes, formatDuration, progressMode, stepProgress, type ProgressMode } from '../src/progress.ts';

const CLEAR_LINE = '\r\x1b[2K';
const MiB = 2 ** 20;

/** A sink that records what was written, a clock moved with the mocked timers. */
function recorder(mode: ProgressMode, columns?: number) {
  const writes: string[] = [];
  let now = 0;
  return {
    writes,
    options: { mode, sink: { write: (text: string) => void writes.push(text), columns }, now: () => now },
    /** Moves the clock and fires the timers due by then. */
    advance(ms: number) {
      now += ms;
      mock.timers.tick(ms);
    },
  };
}

describe('progress bars', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setInterval'] }));
  afterEach(() => mock.timers.reset());

  test('shown on a terminal without --json; --progress forces it (plain lines off a terminal), --no-progress hides it', () => {
    assert.equal(progressMode(undefined, false, true), 'redraw');
    assert.equal(progressMode(undefined, true, true), 'off', '--json');
    assert.equal(progressMode(undefined, false, false), 'off', 'stderr is a pipe');
    assert.equal(progressMode(true, false, false), 'lines');
    assert.equal(progressMode(true, true, true), 'redraw');
    assert.equal(progressMode(false, false, true), 'off');
  });

  test('the line: percentage, bar, bytes of the total, rate and ETA; without a total, bytes and rate', () => {
    assert.equal(byteLine('name', 12.3 * MiB, 27 * MiB, 8.1 * MiB, 'ETA 2s'), 'name  45% [=========>          ] 12.3 MiB / 27.0 MiB  8.1 MiB/s  ETA 2s');
    assert.equal(byteLine('name', 12.3 * MiB, undefined, 8.1 * MiB, ''), 'name  12.3 MiB  8.1 MiB/s');
    assert.equal(byteLine('empty', 0, 0, 0, ''), 'empty  100% [====================] 0 B / 0 B  0 B/s');
    assert.deepEqual([formatBytes(512), formatBytes(1536), formatBytes(3 * 2 ** 30)], ['512 B', '1.5 KiB', '3.0 GiB']);
    assert.deepEqual([formatDuration(2400), formatDuration(65_000), formatDuration(7_380_000)], ['2s', '1m05s', '2h03m']);
  });

  test('on a terminal: redrawn in place at most ten times a second, with rate and ETA, then a final line', () => {
    const r = recorder('redraw');
    const exitListeners = process.listenerCount('exit');
    const progress = byteProgress('blob.bin', 10 * MiB, r.options);
    assert.equal(process.listenerCount('exit'), exitListeners + 1, 'a process that exits mid-transfer clears the line');
    for (let i = 1; i <= 100; i++) {
      progress.set(i * 40_000); // 100 updates in one second: 4 MB/s
      r.advance(10);
    }
    assert.equal(r.writes.length, 10, 'one draw per 100 ms, whatever the updates');
    assert.ok(r.writes.every((w) => w.startsWith(CLEAR_LINE) && !w.includes('\n')));
    assert.equal(r.writes.at(-1), `${CLEAR_LINE}blob.bin  38% [=======>            ] 3.8 MiB / 10.0 MiB  3.8 MiB/s  ETA 2s`);
    progress.finish(10 * MiB);
    assert.deepEqual(r.writes.slice(-2), [CLEAR_LINE, 'blob.bin  100% [====================] 10.0 MiB / 10.0 MiB  10.0 MiB/s  in 1s\n']);
    const ended = r.writes.length;
    r.advance(1000);
    assert.equal(r.writes.length, ended, 'nothing drawn after the end');
    assert.equal(process.listenerCount('exit'), exitListeners);
  });

  test('on an error the line is cleared, never left half-drawn; a line longer than the terminal is cut, not wrapped', () => {
    const r = recorder('redraw', 30);
    const progress = byteProgress('a-file-with-a-long-name.tar.gz', undefined, r.options);
    progress.add(5 * MiB);
    r.advance(100);
    assert.equal(r.writes[0], `${CLEAR_LINE}a-file-with-a-long-name.tar.g`);
    progress.stop();
    assert.equal(r.writes.at(-1), CLEAR_LINE);
    progress.stop();
    assert.equal(r.writes.length, 2, 'stopping twice (finally after catch) writes nothing more');
  });

  test('on a pipe (--progress): a plain line a second while bytes move, none during a stall, and the final line', () => {
    const r = recorder('lines');
    const progress = byteProgress('down.bin', undefined, r.options);
    for (let second = 1; second <= 3; second++) {
      progress.add(MiB);
      r.advance(1000);
    }
    r.advance(2000); // stalled
    progress.finish();
    assert.deepEqual(r.writes, [
      'down.bin  1.0 MiB  1.0 MiB/s\n',
      'down.bin  2.0 MiB  1.0 MiB/s\n',
      'down.bin  3.0 MiB  1.0 MiB/s\n',
      'down.bin  100% [====================] 3.0 MiB / 3.0 MiB  614.4 KiB/s  in 5s\n',
    ]);
    assert.ok(!r.writes.join('').includes('\r'));
  });

  test("a build's step: a line when it changes (pipe), the log printed above it, and how it ended", () => {
    const r = recorder('lines');
    const progress = stepProgress('web', r.options);
    progress.update({ step: 'resolve', index: 1, count: 9 });
    progress.print('resolving registry.example.com/web:1');
    progress.update({ step: 'resolve', index: 1, count: 9 });
    r.advance(3000);
    progress.update({ step: 'pull', index: 2, count: 9 });
    progress.finish('failed');
    assert.deepEqual(r.writes, [
      'web  step 1/9 resolve  0s\n',
      'resolving registry.example.com/web:1\n',
      'web  step 2/9 pull  3s\n',
      'web  failed at step 2/9 pull after 3s\n',
    ]);

    const tty = recorder('redraw');
    const live = stepProgress('web', tty.options);
    live.update({ step: 'boot', index: 6, count: 9 });
    live.print('[    1.2] booting');
    assert.deepEqual(tty.writes, [`${CLEAR_LINE}web  step 6/9 boot  0s`, CLEAR_LINE, '[    1.2] booting\n', `${CLEAR_LINE}web  step 6/9 boot  0s`]);
    tty.advance(2000);
    assert.equal(tty.writes.at(-1), `${CLEAR_LINE}web  step 6/9 boot  2s`, 'the time moves on a terminal');
    live.finish('ready');
    assert.equal(tty.writes.at(-1), 'web  ready: 9 steps in 2s\n');
  });
});

describe('Ctrl-C during a transfer', () => {
  test('aborts the work, which clears its line as it unwinds; the command ends with exit 130 and a message', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    try {
      const r = recorder('redraw');
      const progress = byteProgress('big.bin', 100 * MiB, r.options);
      progress.set(10 * MiB);
      r.advance(100);
      const listeners = process.listenerCount('SIGINT');
      const running = interruptible('the download of big.bin stopped; nothing was written', (signal) =>
        new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('The operation was aborted')))).finally(() =>
          progress.stop(),
        ),
      );
      assert.equal(process.listenerCount('SIGINT'), listeners + 1, 'Ctrl-C is handled while it runs');
      process.emit('SIGINT', 'SIGINT');
      const error = await running.then(
        () => assert.fail('it went on'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof InterruptedError);
      assert.deepEqual(
        { exitCode: explain(error, 'x').exitCode, message: explain(error, 'x').message },
        { exitCode: 130, message: 'interrupted: the download of big.bin stopped; nothing was written' },
      );
      assert.equal(r.writes.at(-1), CLEAR_LINE, 'the line was cleared, not left half-drawn');
      assert.equal(process.listenerCount('SIGINT'), listeners, 'and Ctrl-C is back to its default');
    } finally {
      mock.timers.reset();
    }
  });
});

describe('counting an upload', () => {
  test("counts a Blob's bytes as the SDK's streamed upload reads them; a retry counts again from 0; FormData still gets every byte", async () => {
    const bytes = new Uint8Array(3 * 65_536 + 7).map((_, i) => i % 251);
    // A file's Blob, as `sandbox upload` sends it (read in chunks from disk).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-progress-'));
    fs.writeFileSync(path.join(dir, 'f.bin'), bytes);
    const seen: number[] = [];
    const blob = countedBlob(await fs.openAsBlob(path.join(dir, 'f.bin')), (n) => seen.push(n));
    assert.equal(blob.size, bytes.length);
    const body = multipartBody([['session_id', 's']], { name: 'file', filename: 'f.bin', blob });
    for (let attempt = 0; attempt < 2; attempt++) {
      const sent = new Uint8Array(await new Response(body.open()).arrayBuffer());
      assert.equal(sent.length, body.length);
    }
    assert.equal(seen.filter((n) => n === 0).length, 2, 'each reading starts at 0');
    assert.equal(seen.at(-1), bytes.length);
    assert.ok(seen.length > 4, `counted chunk by chunk (${seen.length} counts)`);
    const form = new FormData();
    form.append('file', blob, 'f.bin');
    assert.deepEqual(new Uint8Array(await (form.get('file') as Blob).arrayBuffer()), bytes);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
