/**
 * The session page's decisions that need no browser: which rich results may be shown and how (src/pages/session/
 * result-formats.ts), the paths the Files panel makes (file-paths.ts), and how the Run panel keeps its output
 * (output-buffer.ts). The browser test (dashboard.test.ts) shows them on a real VM.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parentOf, pathIn } from '../src/pages/session/file-paths.ts';
import { imageDataUrl, sandboxDocument, showsOnItsOwn } from '../src/pages/session/result-formats.ts';
import { appendOutput, OUTPUT_LIMIT_CHARS, type HeldOutput } from '../src/pages/session/output-buffer.ts';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]).toString('base64');

test('an image is shown only when it is base64 of the format it claims', () => {
  assert.equal(imageDataUrl('png', PNG), `data:image/png;base64,${PNG}`);
  assert.equal(imageDataUrl('png', `${PNG.slice(0, 8)}\n${PNG.slice(8)}`), `data:image/png;base64,${PNG}`, 'line breaks are dropped');
  assert.equal(imageDataUrl('jpeg', JPEG), `data:image/jpeg;base64,${JPEG}`);
  assert.equal(imageDataUrl('png', JPEG), null, 'a JPEG is not a PNG');
  assert.equal(imageDataUrl('png', `${PNG}"onerror="x`), null, 'nothing but base64 reaches the attribute');
  assert.equal(imageDataUrl('png', Buffer.from('<svg onload=alert(1)>').toString('base64')), null);
  assert.equal(imageDataUrl('png', PNG.slice(0, -1)), null, 'cut short');
  assert.equal(imageDataUrl('png', undefined), null);
});

test("HTML goes into a document whose own policy comes before the guest's markup and loads nothing", () => {
  const html = sandboxDocument('<meta http-equiv="Content-Security-Policy" content="default-src *"><img src="https://example.com/x.png">');
  const policy = html.indexOf(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
  assert.ok(policy > 0 && policy < html.indexOf('example.com'), 'the policy is first (a later one can only narrow it)');
});

test("a result gets a box unless it is the last value's plain text, which stdout already shows", () => {
  assert.equal(showsOnItsOwn({ is_main_result: true, text: '42' }), false);
  assert.equal(showsOnItsOwn({ is_main_result: true, text: 'df', html: '<table></table>' }), true);
  assert.equal(showsOnItsOwn({ is_main_result: false, text: 'displayed' }), true);
  assert.equal(showsOnItsOwn({ is_main_result: false, text: '<Figure>', png: PNG }), true);
});

test('the Files panel puts names in the folder shown; a name starting with "/" is a path of its own', () => {
  assert.equal(pathIn('/root', 'a.txt'), '/root/a.txt');
  assert.equal(pathIn('/', 'etc'), '/etc');
  assert.equal(pathIn('/root/dir/', 'b'), '/root/dir/b');
  assert.equal(pathIn('/root', '/tmp/moved.txt'), '/tmp/moved.txt');
  assert.equal(parentOf('/root/dir'), '/root');
  assert.equal(parentOf('/root/dir/'), '/root');
  assert.equal(parentOf('/root'), '/');
  assert.equal(parentOf('/'), '/');
});

test('the Run panel merges output of one stream and keeps the newest when a run prints more than it holds', () => {
  const empty: HeldOutput = { output: [], trimmed: false };
  let state = appendOutput(appendOutput(appendOutput(empty, 'stdout', 'a'), 'stdout', 'b'), 'stderr', 'c');
  assert.deepEqual(state.output, [
    { stream: 'stdout', text: 'ab' },
    { stream: 'stderr', text: 'c' },
  ]);
  state = appendOutput(state, 'stdout', 'x'.repeat(OUTPUT_LIMIT_CHARS));
  assert.equal(state.trimmed, true);
  assert.deepEqual(
    state.output.map((chunk) => [chunk.stream, chunk.text.length]),
    [['stdout', OUTPUT_LIMIT_CHARS]],
  );
});
