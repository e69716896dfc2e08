/**
 * Computer use on a real desktop VM (issue 18): one desktop session shared by every case (its template snapshot
 * is made once). A screenshot decodes as a non-blank PNG of the configured size; text typed through the API into
 * the terminal runs a command whose result is read back with an execute, and the screenshot changes where the
 * terminal is; the noVNC viewer opened in Chromium on the host shows the desktop (its canvas non-blank and
 * matching an API screenshot); a recording downloads as an MP4 whose duration ffprobe reads as > 0; another
 * user gets 404 on the proxy, the viewer URL and the WebSocket; a view-only viewer's input is dropped.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { PNG } from 'pngjs';
import WebSocket from 'ws';
import { Sandboxd } from '@sandboxd/sdk';
import { makeHome, runCli } from '../../../cli/test/run-cli.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const SCREEN = { width: 1024, height: 768 };

/** Fraction of pixels that differ by more than `tolerance` on any channel, in the rectangle (default all). */
function differingShare(a: PNG, b: PNG, tolerance = 24, rect = { x: 0, y: 0, width: a.width, height: a.height }): number {
  let differing = 0;
  for (let y = rect.y; y < rect.y + rect.height; y++) {
    for (let x = rect.x; x < rect.x + rect.width; x++) {
      const i = (y * a.width + x) * 4;
      if (
        Math.abs(a.data[i]! - b.data[i]!) > tolerance ||
        Math.abs(a.data[i + 1]! - b.data[i + 1]!) > tolerance ||
        Math.abs(a.data[i + 2]! - b.data[i + 2]!) > tolerance
      )
        differing++;
    }
  }
  return differing / (rect.width * rect.height);
}

/** Distinct colours among a sample of pixels: a blank screen has one. */
function distinctColours(png: PNG): number {
  const seen = new Set<number>();
  for (let i = 0; i < png.data.length; i += 4 * 97) seen.add((png.data[i]! << 16) | (png.data[i + 1]! << 8) | png.data[i + 2]!);
  return seen.size;
}

describe('computer use on a real desktop VM', { timeout: 30 * 60_000 }, () => {
  let server: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let sessionId: string;
  let browser: Browser | undefined;
  const work = mkdtempSync(join(tmpdir(), 'sandboxd-desktop-test-'));

  before(async () => {
    server = await startTestServer({});
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
    const created = await call(server, 'POST', '/v1/sessions/session', {
      apiKey: alice.apiKey,
      json: { template: 'desktop', screen_width: SCREEN.width, screen_height: SCREEN.height, vm_lifetime_seconds: 1800 },
    });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.body.source, { kind: 'template', id: 'desktop', name: 'desktop' });
    sessionId = created.body.session_id;
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const api = (method: string, path: string, json?: unknown, who = alice) =>
    call(server, method, `/v1/computeruse/${sessionId}/${path}`, { apiKey: who.apiKey, ...(json !== undefined ? { json } : {}) });
  const screenshot = async (query = ''): Promise<{ png: PNG; bytes: Buffer; contentType: string | null }> => {
    const response = await fetch(`${server.baseUrl}/v1/computeruse/${sessionId}/screenshot${query}`, { headers: { 'x-api-key': alice.apiKey } });
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.equal(response.status, 200, bytes.toString('utf8', 0, 300));
    return { png: PNG.sync.read(bytes), bytes, contentType: response.headers.get('content-type') };
  };

  test('a screenshot is a non-blank PNG of the configured size; scaling shrinks it', async () => {
    const health = await api('GET', 'health');
    assert.equal(health.status, 200, health.text);
    assert.deepEqual(health.body.screen, SCREEN, 'the session asked for 1024×768');
    const { png, contentType } = await screenshot();
    assert.equal(contentType, 'image/png');
    assert.deepEqual([png.width, png.height], [SCREEN.width, SCREEN.height]);
    assert.ok(distinctColours(png) > 3, 'the desktop shows more than one colour (background, terminal, text)');
    const half = await screenshot('?scale=0.5');
    assert.deepEqual([half.png.width, half.png.height], [SCREEN.width / 2, SCREEN.height / 2]);
    const bad = await call(server, 'GET', `/v1/computeruse/${sessionId}/screenshot?scale=7`, { apiKey: alice.apiKey });
    assert.equal(bad.status, 422, bad.text);
  });

  test('text typed into the terminal runs a command; the screenshot changes where the terminal is', async () => {
    const windows = await api('GET', 'windows');
    assert.equal(windows.status, 200, windows.text);
    const terminal = windows.body.windows.find((w: { title: string }) => w.title === 'Terminal');
    assert.ok(terminal, `a terminal window: ${windows.text}`);
    const before = (await screenshot()).png;
    const click = await api('POST', 'action', { action: 'left_click', coordinate: [terminal.x + 100, terminal.y + 100] });
    assert.equal(click.status, 200, click.text);
    // The command's output fills the terminal (about 70 lines of numbers), so the change is plain to see.
    const typed = await api('POST', 'action', { action: 'type', text: "echo desktop-$((6*7)) > /tmp/typed.txt; clear; seq -s ' ' 10000 11400\n" });
    assert.equal(typed.status, 200, typed.text);

    let stdout = '';
    for (let i = 0; i < 40 && stdout !== 'desktop-42\n'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const read = await call(server, 'POST', '/execute', {
        apiKey: alice.apiKey,
        json: { session_id: sessionId, command: 'cat /tmp/typed.txt 2>/dev/null', language: 'bash' },
      });
      stdout = read.body.stdout;
    }
    assert.equal(stdout, 'desktop-42\n', 'the command typed into the terminal ran in the VM');
    await api('POST', 'action', { action: 'wait', duration: 1 });
    const after = (await screenshot()).png;
    const inside = {
      x: terminal.x,
      y: terminal.y,
      width: Math.min(terminal.width, SCREEN.width - terminal.x),
      height: Math.min(terminal.height, SCREEN.height - terminal.y),
    };
    const outside = { x: 0, y: SCREEN.height - 40, width: SCREEN.width, height: 40 };
    const changedInside = differingShare(before, after, 24, inside);
    const changedOutside = differingShare(before, after, 24, outside);
    assert.ok(changedInside > 0.05, `the terminal area changed (${(changedInside * 100).toFixed(1)} % of its pixels)`);
    assert.ok(changedOutside < 0.01, `the rest of the screen did not (${(changedOutside * 100).toFixed(1)} %)`);

    const cursor = await api('POST', 'action', { action: 'cursor_position' });
    assert.deepEqual(cursor.body.cursor, { x: terminal.x + 100, y: terminal.y + 100 });
    const key = await api('POST', 'action', { action: 'key', text: 'ctrl+l' });
    assert.equal(key.status, 200, key.text);
    const outOfScreen = await api('POST', 'action', { action: 'left_click', coordinate: [SCREEN.width, 0] });
    assert.equal(outOfScreen.status, 422, outOfScreen.text);
    assert.deepEqual(outOfScreen.body.detail[0].loc, ['body', 'coordinate']);
  });

  test('the noVNC viewer in Chromium shows the desktop, as the API screenshot does', async () => {
    const viewer = await call(server, 'GET', `/v1/computeruse/${sessionId}/viewer-url`, { apiKey: alice.apiKey });
    assert.equal(viewer.status, 200, viewer.text);
    assert.match(viewer.body.viewer_url, new RegExp(`/v1/app/${sessionId}/6080/vnc\\.html\\?`));
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: { width: SCREEN.width + 40, height: SCREEN.height + 80 } });
    await page.goto(viewer.body.viewer_url);
    // noVNC draws the remote screen on a canvas once connected.
    // (Expressions as strings: they run in the page, where the DOM is, not in this test's Node types. Polled
    // from here: the viewer page's policy forbids eval, which waitForFunction's in-page polling uses.)
    await waitUntil(
      'the viewer canvas',
      async () => ((await page.evaluate("document.querySelector('#noVNC_container canvas')?.width ?? 0")) as number) > 100,
      60_000,
      250,
    );
    const reference = (await screenshot()).png;
    // The canvas pixels (the remote framebuffer at its own size), compared with the API's screenshot.
    let match = 0;
    for (let attempt = 0; attempt < 30 && match < 0.9; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const canvas = (await page.evaluate(
        "(() => { const c = document.querySelector('#noVNC_container canvas'); return { width: c.width, height: c.height, data: c.toDataURL('image/png') }; })()",
      )) as { width: number; height: number; data: string };
      if (canvas.width !== SCREEN.width || canvas.height !== SCREEN.height) continue;
      const drawn = PNG.sync.read(Buffer.from(canvas.data.split(',')[1]!, 'base64'));
      assert.ok(distinctColours(drawn) > 3 || attempt < 29, 'the canvas is not blank');
      match = 1 - differingShare(reference, drawn, 40);
    }
    assert.ok(match >= 0.9, `the viewer's canvas matches the API screenshot (${(match * 100).toFixed(1)} % of pixels)`);
    await page.close();
  });

  test('a recording downloads as an MP4 whose duration ffprobe reads', async () => {
    const started = await api('POST', 'recording/start', { framerate: 5 });
    assert.equal(started.status, 200, started.text);
    const again = await api('POST', 'recording/start', {});
    assert.equal(again.status, 409, again.text);
    await api('POST', 'action', { action: 'type', text: 'seq 1 5\n' });
    await api('POST', 'action', { action: 'wait', duration: 3 });
    const stopped = await api('POST', 'recording/stop');
    assert.equal(stopped.status, 200, stopped.text);
    assert.equal(stopped.body.status, 'ready', stopped.text);
    const id = stopped.body.id;
    await server.services.sandbox.computerUse.settled();
    const list = await call(server, 'GET', `/v1/sessions/${sessionId}/recordings`, { apiKey: alice.apiKey });
    assert.equal(list.status, 200, list.text);
    const saved = list.body.recordings.find((r: { recording_id: string }) => r.recording_id === id);
    assert.equal(saved?.status, 'ready', list.text);
    const download = await fetch(`${server.baseUrl}${saved.download_url}`, { headers: { 'x-api-key': alice.apiKey } });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'video/mp4');
    const file = join(work, `${id}.mp4`);
    writeFileSync(file, Buffer.from(await download.arrayBuffer()));
    const duration = Number(
      execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'default=noprint_wrappers=1:nokey=1', file], {
        encoding: 'utf8',
      }).trim(),
    );
    assert.ok(duration > 0, `ffprobe reads a duration of ${duration} s`);
    // The same file straight from the VM, through the proxy (streamed).
    const direct = await fetch(`${server.baseUrl}/v1/computeruse/${sessionId}/recordings/${id}/download`, { headers: { 'x-api-key': alice.apiKey } });
    assert.equal(direct.status, 200);
    assert.equal(Buffer.from(await direct.arrayBuffer()).length, saved.size_bytes);
    assert.equal((await call(server, 'GET', `/v1/sessions/${sessionId}/recordings/${id}/download`, { apiKey: bob.apiKey })).status, 404);
  });

  test('the client library and the command line drive the same desktop', async () => {
    const client = new Sandboxd({ baseUrl: server.baseUrl, apiKey: alice.apiKey });
    const desktop = client.computerUse.connect(sessionId);
    const png = PNG.sync.read(Buffer.from(await desktop.screenshot({ scale: 0.5 })));
    assert.deepEqual([png.width, png.height], [SCREEN.width / 2, SCREEN.height / 2]);
    await desktop.moveMouse(321, 123);
    assert.deepEqual(await desktop.cursorPosition(), { x: 321, y: 123 });
    assert.deepEqual(await desktop.display(), SCREEN);
    assert.ok((await desktop.windows()).some((w) => w.title === 'Terminal'));

    const home = makeHome(server.baseUrl);
    try {
      const env = home.env({ SANDBOXD_API_KEY: alice.apiKey });
      const viewer = await runCli(['desktop', sessionId, '--view-only', '--json'], env);
      assert.equal(viewer.code, 0, viewer.stderr);
      const printed = viewer.json as { viewer_url: string; view_only: boolean };
      assert.match(printed.viewer_url, /\/6080\/vnc\.html\?/);
      assert.equal(printed.view_only, true);
      const shot = await runCli(['desktop', 'screenshot', sessionId, '-o', 'screen.png'], env);
      assert.equal(shot.code, 0, shot.stderr);
      const written = PNG.sync.read(readFileSync(join(home.home, 'screen.png')));
      assert.deepEqual([written.width, written.height], [SCREEN.width, SCREEN.height]);
      const refused = await runCli(['desktop', sessionId, '--width', '800'], env);
      assert.equal(refused.code, 2, 'a usage mistake exits 2 before any request');
    } finally {
      home.remove();
    }
  });

  test('another user gets 404 on the proxy, the viewer URL and the WebSocket; bad tokens are refused', async () => {
    assert.equal((await api('GET', 'screenshot', undefined, bob)).status, 404);
    assert.equal((await api('POST', 'action', { action: 'left_click' }, bob)).status, 404);
    assert.equal((await call(server, 'GET', `/v1/computeruse/${sessionId}/viewer-url`, { apiKey: bob.apiKey })).status, 404);
    const bobsDesktop = await call(server, 'POST', '/v1/sessions/session', { apiKey: bob.apiKey, json: { template: 'desktop' } });
    const bobsViewer = await call(server, 'GET', `/v1/computeruse/${bobsDesktop.body.session_id}/viewer-url`, { apiKey: bob.apiKey });
    assert.equal(bobsViewer.status, 200, bobsViewer.text);
    const bobsToken = new URL(bobsViewer.body.websocket_url).searchParams.get('token')!;
    const handshake = (query: string, headers: Record<string, string> = {}): Promise<number> =>
      new Promise((resolve, reject) => {
        const socket = new WebSocket(`${server.baseUrl.replace(/^http/, 'ws')}/v1/computeruse/${sessionId}/vnc/websockify${query}`, { headers });
        socket.on('open', () => {
          socket.close();
          resolve(101);
        });
        socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.on('error', (error) => (error.message.includes('Unexpected server response') ? undefined : reject(error)));
      });
    assert.equal(await handshake(`?token=${bobsToken}`), 404, "bob's token does not open alice's desktop");
    assert.equal(await handshake('', { 'x-api-key': bob.apiKey }), 404, "bob's key does not either");
    assert.equal(await handshake('?token=not-a-token'), 401);
    assert.equal(await handshake(''), 401);
    const plain = await call(server, 'GET', `/v1/computeruse/${sessionId}/vnc/websockify`);
    assert.equal(plain.status, 426, plain.text);
    assert.equal(plain.body.code, 'UPGRADE_REQUIRED');
    // A viewer page token opens only its own session's viewer.
    const page = new URL(bobsViewer.body.viewer_url);
    const foreign = await fetch(`${server.baseUrl}/v1/app/${sessionId}/6080/vnc.html?sandboxd_token=${page.searchParams.get('sandboxd_token')}`, {
      redirect: 'manual',
    });
    assert.equal(foreign.status, 403);
    const notDesktop = await call(server, 'POST', '/v1/sessions/session', { apiKey: alice.apiKey, json: {} });
    const refused = await call(server, 'GET', `/v1/computeruse/${notDesktop.body.session_id}/viewer-url`, { apiKey: alice.apiKey });
    assert.equal(refused.status, 409, refused.text);
    const screenOnDefault = await call(server, 'POST', '/v1/sessions/session', { apiKey: alice.apiKey, json: { screen_width: 800 } });
    assert.equal(screenOnDefault.status, 400, screenOnDefault.text);
  });

  test("a view-only viewer's input never reaches the desktop; an interactive one's does", async () => {
    /** Connects as a VNC client (RFB 3.8, security None) through a viewer URL's WebSocket and moves the pointer. */
    const pointAt = async (viewOnly: boolean, x: number, y: number): Promise<void> => {
      const viewer = await call(server, 'GET', `/v1/computeruse/${sessionId}/viewer-url?view_only=${viewOnly}`, { apiKey: alice.apiKey });
      assert.equal(viewer.status, 200, viewer.text);
      assert.equal(viewer.body.view_only, viewOnly);
      const socket = new WebSocket(viewer.body.websocket_url, ['binary']);
      const received: Buffer[] = [];
      socket.on('message', (data: Buffer) => received.push(data));
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      });
      const waitFor = async (bytes: number) => {
        for (let i = 0; i < 100 && Buffer.concat(received).length < bytes; i++) await new Promise((resolve) => setTimeout(resolve, 100));
        assert.ok(Buffer.concat(received).length >= bytes, `the VNC server sent ${bytes} bytes`);
      };
      await waitFor(12);
      assert.match(Buffer.concat(received).toString('latin1', 0, 12), /^RFB 003\.00\d\n$/);
      socket.send(Buffer.from('RFB 003.008\n'));
      await waitFor(14); // the security types offered
      socket.send(Buffer.from([1])); // None
      await waitFor(18); // SecurityResult OK
      socket.send(Buffer.from([1])); // ClientInit: shared
      await waitFor(18 + 24); // ServerInit
      socket.send(Buffer.from([5, 0, x >> 8, x & 0xff, y >> 8, y & 0xff]));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      socket.close();
    };
    const cursor = async () => (await api('POST', 'action', { action: 'cursor_position' })).body.cursor;
    const start = await cursor();
    const target = { x: start.x > 300 ? 50 : 500, y: 60 };
    await pointAt(true, target.x, target.y);
    assert.deepEqual(await cursor(), start, 'a view-only viewer did not move the pointer');
    await pointAt(false, target.x, target.y);
    assert.deepEqual(await cursor(), target, 'an interactive viewer did');
  });
});
