// test-order: last (Chromium in a VM keeps both cores busy: scripts/run-tests.mjs runs it after the light lane is done)
/**
 * `sandbox browser` as a user runs it (a child process) against the real server and its browser service, on real
 * VMs: render loads a page a server in a network namespace serves, in a Chromium in a VM of its own, and writes a
 * real PNG of the size asked for where asked (its HTML and text too), and says what it rendered; sessions lists a
 * real session, close closes it (and is content when it was already closed). Usage mistakes exit 2 before any
 * request; a plan without browser sessions is told so. One render and one session in all: under TCG each takes
 * seconds.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PLANS } from '../../server/src/core/plans.ts';
import { startNetnsWebServer, type NetnsWebServer } from '../../server/test/helpers/netns-web.ts';
import { call, startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { makeHome, runCli, type CliHome } from './run-cli.ts';

/** Width and height from a PNG's IHDR chunk, after checking the signature, the chunk and the IEND at the end. */
function pngSize(bytes: Buffer): [number, number] {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'the PNG signature');
  assert.equal(bytes.readUInt32BE(8), 13, 'IHDR is 13 bytes');
  assert.equal(bytes.toString('latin1', 12, 16), 'IHDR');
  assert.equal(bytes.toString('latin1', bytes.length - 8, bytes.length - 4), 'IEND', 'the image is whole');
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

describe('sandbox browser', { timeout: 20 * 60_000 }, () => {
  let web: NetnsWebServer;
  let server: TestServer;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;
  let apiKey: string;

  before(async () => {
    web = await startNetnsWebServer();
    server = await startTestServer({
      config: {
        // No pools: the render's and the session's VMs are restored when asked for (a pooled browser VM's
        // warm-up competes with the test's own page under TCG); no plain sandbox VM.
        browserPoolSize: 0,
        poolSize: 0,
        plans: { ...DEFAULT_PLANS, nobrowser: { ...DEFAULT_PLANS.free!, maxBrowserSessions: 0 } },
      },
    });
    apiKey = (await server.createUserWithKey('rita')).apiKey;
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: apiKey });
  });
  after(async () => {
    home?.remove();
    await server?.close();
    await web?.stop();
  });

  const inHome = (name: string) => path.join(home.home, name);
  const historyTotal = async () => (await call(server, 'GET', '/v1/browser/usage/history', { apiKey })).body.total as number;

  test('render writes a real PNG of the viewport to -o, its HTML and text where asked, and prints the usage id, title and size', async () => {
    const url = `${web.baseUrl}/page/3`;
    const res = await runCli(
      [
        'browser',
        'render',
        url,
        '-o',
        'shot.png',
        '--width',
        '640',
        '--height',
        '480',
        '--wait-for',
        'h1',
        '--wait-timeout',
        '60000',
        '--html-out',
        'page.html',
        '--text',
      ],
      env,
    );
    assert.equal(res.code, 0, res.stderr);
    const png = fs.readFileSync(inHome('shot.png'));
    assert.deepEqual(pngSize(png), [640, 480], 'the size asked for');
    const usageId = Number(/^usage (\d+): /m.exec(res.stdout)?.[1]);
    assert.match(res.stdout, new RegExp(`^usage ${usageId}: Page 3 — ${url.replace(/[.]/g, '\\.')} \\(HTTP 200\\)$`, 'm'));
    assert.match(res.stdout, new RegExp(`^${png.length} bytes, 640×480 png, written to shot\\.png$`, 'm'));
    assert.match(res.stdout, /^HTML written to page\.html$/m);
    assert.match(res.stdout, /\n\n[^]*Page 3/, 'the readable text after the summary');
    assert.match(fs.readFileSync(inHome('page.html'), 'utf8'), /<h1>Page 3<\/h1>/);
    assert.ok(
      (await web.requests()).some((r) => r.path === '/page/3'),
      'the browser in the VM fetched the page',
    );

    const stored = await call(server, 'GET', `/v1/browser/screenshot/${usageId}`, { apiKey });
    assert.equal(stored.status, 200, stored.text);
    assert.deepEqual(Buffer.from(stored.body.screenshot, 'base64'), png, 'the file holds the screenshot the server kept');
  });

  test('usage mistakes exit 2 before any request', async () => {
    const before = await historyTotal();
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
    assert.equal(await historyTotal(), before, 'no render reached the server');
  });

  test('a plan without browser sessions: render says the quota is reached (exit 5), and no file is written', async () => {
    const walker = (await server.createUserWithKey('walker', 'nobrowser')).apiKey;
    const res = await runCli(['browser', 'render', `${web.baseUrl}/page/1`, '-o', 'refused.png'], home.env({ SANDBOXD_API_KEY: walker }));
    assert.equal(res.code, 5, res.stderr);
    assert.match(res.stderr, /Quota exceeded: .*nobrowser.*sandbox browser sessions/);
    assert.equal(fs.existsSync(inHome('refused.png')), false);
  });

  test('sessions lists the open sessions; close closes one, and is content when it was already closed', async () => {
    assert.equal((await runCli(['browser', 'sessions'], env)).stdout.trim(), 'No open browser sessions.');
    const created = await call(server, 'POST', '/v1/browser/sessions/', { apiKey, json: { viewport_width: 1024, viewport_height: 768 } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.session_id as string;
    const listed = await runCli(['browser', 'sessions'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${id}\\s+about:blank\\s+1024×768\\s+0\\s`, 'm'));
    const asJson = await runCli(['--json', 'browser', 'sessions'], env);
    assert.deepEqual(
      asJson.json.map((s: { session_id: string }) => s.session_id),
      [id],
    );

    const closed = await runCli(['browser', 'close', id], env);
    assert.equal(closed.code, 0, closed.stderr);
    assert.equal(closed.stdout.trim(), `Closed browser session ${id}.`);
    assert.equal((await call(server, 'GET', `/v1/browser/sessions/${id}`, { apiKey })).body.status, 'closed');
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
