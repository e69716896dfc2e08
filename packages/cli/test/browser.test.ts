/**
 * `sandbox browser` as a user runs it (a child process) against the real server, whose browser service is a
 * stand-in (server/test/helpers/fake-browser.ts: fixed 1×1 images, failures on cue): render writes the screenshot
 * bytes where asked and says what it rendered, its options reach the server, usage mistakes exit 2 before any
 * request, browser errors say what happened; sessions lists, close closes (and is content when already closed).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fakeBrowser, FAKE_JPEG_BASE64, FAKE_PNG_BASE64, type FakeBrowser } from '../../server/test/helpers/fake-browser.ts';
import { call, startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { makeHome, runCli, type CliHome } from './run-cli.ts';

const PNG = Buffer.from(FAKE_PNG_BASE64, 'base64');
const JPEG = Buffer.from(FAKE_JPEG_BASE64, 'base64');

describe('sandbox browser', () => {
  let server: TestServer;
  let browser: FakeBrowser;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;
  let apiKey: string;

  before(async () => {
    browser = fakeBrowser({ maxSessions: 3 });
    server = await startTestServer({ browser });
    apiKey = (await server.createUserWithKey('rita')).apiKey;
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: apiKey });
  });
  after(async () => {
    home?.remove();
    await server?.close();
  });

  const lastRender = () => [...browser.calls].reverse().find((c) => c.method === 'render')?.request as Record<string, unknown>;
  const inHome = (name: string) => path.join(home.home, name);

  test('render writes the PNG to -o and prints the usage id, title and size; a bare host name is https', async () => {
    const res = await runCli(['browser', 'render', 'example.com', '-o', 'shot.png'], env);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(fs.readFileSync(inHome('shot.png')), PNG);
    assert.match(res.stdout, /^usage \d+: Fake page — https:\/\/example\.com \(HTTP 200\)$/m);
    assert.match(res.stdout, new RegExp(`^${PNG.length} bytes, 1×1 png, written to shot\\.png$`, 'm'));
    const sent = lastRender();
    assert.equal(sent.url, 'https://example.com');
    assert.deepEqual([sent.width, sent.height, sent.format, sent.return_html, sent.return_text], [1280, 720, 'png', false, false], "the server's defaults");
  });

  test('render options reach the server; --html-out and --text; --json prints the summary', async () => {
    const res = await runCli(
      ['--json', 'browser', 'render', 'https://example.com/a', '-o', 'page.jpeg', '--format', 'jpeg', '--quality', '70', '--width', '800', '--height', '600', '--full-page', '--wait-for', '#main', '--wait-timeout', '5000', '--html-out', 'page.html', '--text'],
      env,
    );
    assert.equal(res.code, 0, res.stderr);
    const sent = lastRender();
    assert.deepEqual(
      [sent.format, sent.quality, sent.width, sent.height, sent.full_page, sent.wait_for_selector, sent.wait_timeout, sent.return_html, sent.return_text],
      ['jpeg', 70, 800, 600, true, '#main', 5000, true, true],
    );
    assert.deepEqual(fs.readFileSync(inHome('page.jpeg')), JPEG);
    assert.match(fs.readFileSync(inHome('page.html'), 'utf8'), /<title>Fake page<\/title>/);
    assert.equal(res.json.format, 'jpeg');
    assert.equal(res.json.bytes, JPEG.length);
    assert.equal(res.json.text, 'Fake page');
    assert.equal(res.json.file, inHome('page.jpeg'));
    assert.equal(res.json.screenshot, undefined, 'the image is in the file, not in the JSON');
  });

  test('the format follows the output extension; without -o the file is named after the usage id; -o - writes to stdout', async () => {
    assert.equal((await runCli(['browser', 'render', 'https://example.com', '-o', 'x.jpg'], env)).code, 0);
    assert.equal(lastRender().format, 'jpeg');
    const named = await runCli(['--json', 'browser', 'render', 'https://example.com'], env);
    assert.equal(named.code, 0, named.stderr);
    assert.equal(path.basename(named.json.file), `render-${named.json.usage_id}.png`);
    assert.ok(fs.existsSync(named.json.file));
    const piped = await runCli(['browser', 'render', 'https://example.com', '-o', '-'], env);
    assert.equal(piped.code, 0, piped.stderr);
    assert.match(piped.stdout, /^\uFFFDPNG\r\n[\s\S]*IHDR[\s\S]*IEND/, 'the PNG on stdout (its first byte is not UTF-8, as the test reads it)');
    assert.match(piped.stderr, /^usage \d+: Fake page/m);
  });

  test('usage mistakes exit 2 before any request', async () => {
    const before = browser.calls.length;
    for (const args of [
      ['browser', 'render', 'https://example.com', '--quality', '80'],
      ['browser', 'render', 'https://example.com', '--format', 'gif'],
      ['browser', 'render', 'https://example.com', '--width', '50'],
      ['browser', 'render', 'https://example.com', '--quality', '101', '--format', 'jpeg'],
      ['browser', 'render', 'not a url'],
      ['--json', 'browser', 'render', 'https://example.com', '-o', '-'],
      ['browser', 'close'],
    ]) {
      const res = await runCli(args, env);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
    }
    assert.equal(browser.calls.length, before, 'nothing reached the server');
  });

  test('browser errors say what happened: a page that cannot load, a timeout', async () => {
    const unreachable = await runCli(['browser', 'render', 'https://unreachable.invalid/'], env);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /The page could not be loaded: could not load https:\/\/unreachable\.invalid\/: net::ERR_NAME_NOT_RESOLVED/);
    const slow = await runCli(['browser', 'render', 'https://slow.example/'], env);
    assert.equal(slow.code, 1);
    assert.match(slow.stderr, /The browser timed out: .*--wait-timeout/);
    const json = await runCli(['--json', 'browser', 'render', 'https://slow.example/'], env);
    assert.deepEqual([JSON.parse(json.stderr).error.type, JSON.parse(json.stderr).error.code], ['BrowserTimeoutError', 'BROWSER_TIMEOUT']);
  });

  test('sessions lists the open sessions; close closes one, and is content when it was already closed', async () => {
    assert.equal((await runCli(['browser', 'sessions'], env)).stdout.trim(), 'No open browser sessions.');
    const created = await call(server, 'POST', '/v1/browser/sessions/', { apiKey, json: { viewport_width: 1024, viewport_height: 768 } });
    const id = created.body.session_id as string;
    const listed = await runCli(['browser', 'sessions'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${id}\\s+about:blank\\s+1024×768\\s+0\\s`, 'm'));
    const asJson = await runCli(['--json', 'browser', 'sessions'], env);
    assert.deepEqual(asJson.json.map((s: { session_id: string }) => s.session_id), [id]);

    const closed = await runCli(['browser', 'close', id], env);
    assert.equal(closed.code, 0, closed.stderr);
    assert.equal(closed.stdout.trim(), `Closed browser session ${id}.`);
    const again = await runCli(['--json', 'browser', 'close', id], env);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(again.json, { session_id: id, closed: false });
    assert.equal((await runCli(['browser', 'sessions'], env)).stdout.trim(), 'No open browser sessions.');
  });

  test('help lists the browser commands', async () => {
    const help = await runCli(['browser', '--help'], env);
    assert.equal(help.code, 0);
    for (const command of ['render', 'sessions', 'close']) assert.match(help.stdout, new RegExp(`\\n  ${command}\\b`), command);
  });
});
