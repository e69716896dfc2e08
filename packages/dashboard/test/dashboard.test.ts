/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against a real server with
 * real VMs: sign in, create a sandbox, run code, a terminal, files both ways, API keys, a vault's secrets (their
 * values never shown nor sent back), a webhook's test delivery, approving `sandbox login`, and never seeing
 * another user's sandbox. One server, one browser and one sandbox for the whole file (VMs are slow under TCG).
 * Screenshots of the main pages go to docs/screenshots/ for docs/guides/web-console.md.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';
import { makeHome, startCli, waitFor, type CliHome } from '../../cli/test/run-cli.ts';
import { call, startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { startReceiver, type Receiver } from '../../server/test/helpers/webhook-receiver.ts';
import { waitUntil } from '../../server/test/helpers/wait.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SCREENSHOTS = path.join(root, 'docs', 'screenshots');
const DIST = path.join(root, 'packages', 'dashboard', 'dist');
const VIEWPORT = { width: 1280, height: 800 };
const FIRST_LOAD_LIMIT_BYTES = 300 * 1024;
const VM_TIMEOUT_MS = 240_000;

describe('the web console in Chromium', { timeout: 900_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  let alice: { userId: number; apiKey: string; password: string };
  let bob: { userId: number; apiKey: string; password: string };
  let bobSession: string;
  let sessionId: string;
  let home: CliHome;

  async function screenshot(name: string): Promise<void> {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  }

  before(async () => {
    assert.ok(fs.existsSync(path.join(DIST, 'index.html')), 'the console is built (node scripts/build-dashboard.mjs; setup does it)');
    server = await startTestServer({ config: { webhookAllowPrivate: true } });
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
    await server.services.users.create({ username: 'root-admin', password: 'root-admin-password', isAdmin: true });
    receiver = await startReceiver();
    home = makeHome(server.baseUrl);
    // Bob's sandbox, which Alice must never see.
    const created = await call(server, 'POST', '/v1/sessions/session', { apiKey: bob.apiKey, json: { metadata: { owner: 'bob' } } });
    assert.equal(created.status, 200, created.text);
    bobSession = created.body.session_id;
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    context = await browser.newContext({ viewport: VIEWPORT, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(30_000);
  });

  after(async () => {
    await browser?.close();
    await receiver?.close();
    home?.remove();
    await server?.close();
  });

  test('the server serves the console under a strict CSP; the first load is under 300 KiB gzip', async () => {
    const index = await fetch(`${server.baseUrl}/sandboxes`, { headers: { accept: 'text/html' } });
    assert.equal(index.status, 200);
    // Scripts by this response's nonce only ('self' would admit what VMs serve under /v1/app/), so never stored.
    assert.match(index.headers.get('content-security-policy') ?? '', /script-src 'nonce-[\w-]+' 'strict-dynamic'(;|$)/);
    assert.equal(index.headers.get('cache-control'), 'no-store');
    const html = await index.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    // What the first load fetches: index.html, its module script and its stylesheets (xterm.js is lazy).
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.some((a) => a.endsWith('.js')));
    let gzipped = gzipSync(html).length;
    for (const asset of assets) {
      const res = await fetch(server.baseUrl + asset);
      assert.equal(res.status, 200, asset);
      assert.match(res.headers.get('cache-control') ?? '', /max-age=31536000.*immutable|immutable.*max-age=31536000/);
      gzipped += gzipSync(Buffer.from(await res.arrayBuffer())).length;
    }
    console.log(`first load: ${(gzipped / 1024).toFixed(1)} KiB gzip (${assets.length + 1} files)`);
    assert.ok(gzipped <= FIRST_LOAD_LIMIT_BYTES, `first load is ${gzipped} bytes gzip`);
    // The API keeps its paths; unknown paths are still the API's 404.
    assert.equal((await call(server, 'GET', '/healthz')).status, 200);
    assert.equal((await fetch(`${server.baseUrl}/no-such-page`)).status, 404);
  });

  test('sign in with username and password; the session cookie is HttpOnly and needs the CSRF header to change anything', async () => {
    await page.goto(`${server.baseUrl}/keys`);
    await page.waitForURL(/\/sign-in\?next=%2Fkeys/);
    await screenshot('sign-in');
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Incorrect username or password' }).waitFor();
    await page.getByLabel('Password').fill(alice.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/keys$/);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    const cookies = await context.cookies(server.baseUrl);
    const session = cookies.find((c) => c.name === 'sandboxd_session')!;
    const csrf = cookies.find((c) => c.name === 'sandboxd_csrf')!;
    assert.ok(session.httpOnly && session.sameSite === 'Strict', 'the session cookie is HttpOnly, SameSite=Strict');
    assert.ok(!csrf.httpOnly);
    assert.ok(!session.value.startsWith('sbx_'), 'the cookie holds a token, not an API key');
    const cookieHeader = `sandboxd_session=${session.value}; sandboxd_csrf=${csrf.value}`;
    // Reads work with the cookie alone; a change without the CSRF header is refused, with it accepted.
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { headers: { cookie: cookieHeader } })).status, 200);
    const forged = await call(server, 'POST', '/v1/api-keys/', { headers: { cookie: cookieHeader }, json: { description: 'forged' } });
    assert.equal(forged.status, 401, forged.text);
    const wrongToken = await call(server, 'POST', '/v1/api-keys/', {
      headers: { cookie: cookieHeader, 'x-csrf-token': 'x'.repeat(43) },
      json: { description: 'forged' },
    });
    assert.equal(wrongToken.status, 401);
    const listed = await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey });
    assert.ok(!listed.body.some((k: any) => k.description === 'forged'), 'nothing was created');
  });

  test('create a sandbox: it appears live in the list with its lifetime counting down', async () => {
    await page.getByRole('link', { name: 'Sandboxes' }).click();
    await page.getByRole('heading', { name: 'Sandboxes', exact: true }).waitFor();
    await page.getByLabel('vCPUs').selectOption('1');
    await page.getByLabel('Memory (MiB)').fill('512');
    await page.getByLabel('Metadata', { exact: true }).fill('owner=alice, purpose=console-test');
    await page.getByRole('button', { name: 'Create sandbox' }).click();
    await page.waitForURL(/\/sandboxes\/[0-9a-f-]{36}$/);
    sessionId = page.url().split('/').pop()!;
    await page.getByTestId('vm-status').filter({ hasText: 'active' }).waitFor({ timeout: VM_TIMEOUT_MS });

    await page.getByRole('link', { name: '← Sandboxes' }).click();
    const row = page.locator(`tr[data-session-id="${sessionId}"]`);
    await row.waitFor();
    assert.match(await row.innerText(), /active/);
    assert.match(await row.innerText(), /owner=alice/);
    assert.match(await row.innerText(), /\d+m \d+s/, 'a countdown');
    // The metadata filter: a value nobody has hides it, the right one shows it.
    await page.getByLabel('Filter by metadata').fill('owner=nobody');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No running sandboxes match this filter').waitFor();
    await page.getByLabel('Filter by metadata').fill('purpose=console-test');
    await page.getByRole('button', { name: 'Filter' }).click();
    await row.waitFor();
    await screenshot('sandboxes');
  });

  test("another user's sandbox never appears", async () => {
    await page.getByLabel('Filter by metadata').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator(`tr[data-session-id="${sessionId}"]`).waitFor();
    assert.equal(await page.locator(`tr[data-session-id="${bobSession}"]`).count(), 0);
    assert.ok(!(await page.content()).includes(bobSession));
    // Opening it by its id is the API's 404, not Bob's data.
    await page.goto(`${server.baseUrl}/sandboxes/${bobSession}`);
    await page.getByRole('alert').filter({ hasText: 'NOT_FOUND' }).first().waitFor();
    assert.ok(!(await page.content()).includes('owner=bob'));
  });

  test('a sandbox started elsewhere appears live (event stream), and Kill ends it', async () => {
    await page.goto(`${server.baseUrl}/sandboxes`);
    await page.locator(`tr[data-session-id="${sessionId}"]`).waitFor();
    const started = await call(server, 'POST', '/v1/sessions/session', {
      apiKey: alice.apiKey,
      json: { prewarm: true, vcpu_count: 1, metadata: { started: 'by-api' } },
    });
    assert.equal(started.status, 200, started.text);
    const row = page.locator(`tr[data-session-id="${started.body.session_id}"]`);
    // No reload: the list follows vm.started from GET /v1/events/stream (authenticated by the cookie).
    await row.filter({ hasText: 'active' }).waitFor({ timeout: VM_TIMEOUT_MS });
    await row.getByRole('button', { name: /^Kill / }).click();
    await row.waitFor({ state: 'detached', timeout: 60_000 });
    // Ended sandboxes are one click away.
    await page.getByLabel('Show ended sandboxes').check();
    await row.filter({ hasText: 'killed' }).waitFor();
    await page.getByLabel('Show ended sandboxes').uncheck();
    const status = await call(server, 'GET', `/v1/sessions/status/${started.body.session_id}`, { apiKey: alice.apiKey });
    assert.equal(status.body.vm_alive, false);
  });

  test('run print(6*7) and see 42', async () => {
    await page.goto(`${server.baseUrl}/sandboxes/${sessionId}`);
    await page.getByLabel('Code', { exact: true }).fill('print(6*7)');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page
      .getByTestId('run-output')
      .filter({ hasText: /^42\s*$/ })
      .waitFor({ timeout: VM_TIMEOUT_MS });
    await page
      .getByTestId('run-status')
      .filter({ hasText: /^exit 0 · \d+\.\d\d s$/ })
      .waitFor();
    // The executions history has it.
    await page.locator('section[aria-labelledby="executions-heading"] tr', { hasText: 'print(6*7)' }).first().waitFor();
  });

  test('a Bash run shows its output while it runs, stderr apart, and its exit code at the end', async () => {
    const output = page.getByTestId('run-output');
    await page.getByLabel('Language').selectOption('bash');
    await page.getByLabel('Code', { exact: true }).fill('for i in 1 2 3; do echo "line $i"; sleep 1.5; done; echo "to stderr" >&2; exit 3');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await output.filter({ hasText: 'line 1' }).waitFor({ timeout: 60_000 });
    // Read while the loop still sleeps: the first line is there, the last is not, and the run is not over.
    assert.doesNotMatch(await output.innerText(), /line 3/);
    assert.equal(await page.locator('[data-run-phase="running"]').count(), 1, 'still running');
    assert.equal(await page.getByRole('button', { name: 'Stop', exact: true }).isEnabled(), true);
    await page
      .getByTestId('run-status')
      .filter({ hasText: /^exit 3 · \d+\.\d\d s$/ })
      .waitFor({ timeout: 60_000 });
    assert.equal(await output.innerText(), 'line 1\nline 2\nline 3\nto stderr\n');
    assert.equal(await output.locator('[data-stream="stderr"]').innerText(), 'to stderr\n');
    assert.equal(await page.getByRole('button', { name: 'Stop', exact: true }).count(), 0, 'no Stop once it ended');
  });

  test('Stop ends a running command and a running Python cell (whose output shows as it prints); the VM and the interpreter live on', async () => {
    await page.getByLabel('Code', { exact: true }).fill('echo sleeping; sleep 60; echo woke');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByTestId('run-output').filter({ hasText: 'sleeping' }).waitFor({ timeout: 60_000 });
    const stoppedAt = Date.now();
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page
      .getByTestId('run-status')
      .filter({ hasText: /^ended by SIGKILL · / })
      .waitFor({ timeout: 30_000 });
    assert.ok(Date.now() - stoppedAt < 30_000);
    const listed = await call(server, 'GET', `/v1/sessions/${sessionId}/processes`, { apiKey: alice.apiKey });
    const stopped = listed.body.processes.find((p: { command: string | null }) => p.command?.includes('sleep 60'));
    assert.equal(stopped.status, 'exited', listed.text);
    assert.equal(stopped.signal, 'SIGKILL');
    assert.doesNotMatch(await page.getByTestId('run-output').innerText(), /woke/);

    // Python: its output shows while the cell runs (a streamed execute); Stop interrupts the cell, and the
    // session's interpreter keeps its variables.
    await page.getByLabel('Language').selectOption('python');
    await page.getByLabel('Code', { exact: true }).fill('kept = 41\nimport time\nprint("napping")\ntime.sleep(60)');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByTestId('run-output').filter({ hasText: 'napping' }).waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('[data-run-phase="running"]').count(), 1, 'printed while it still runs');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page
      .getByTestId('run-status')
      .filter({ hasText: /cancel/ })
      .waitFor({ timeout: 30_000 });
    await page.getByLabel('Code', { exact: true }).fill('print(kept + 1)');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page
      .getByTestId('run-output')
      .filter({ hasText: /^42\s*$/ })
      .waitFor({ timeout: 60_000 });
    const status = await call(server, 'GET', `/v1/sessions/status/${sessionId}`, { apiKey: alice.apiKey });
    assert.equal(status.body.vm_alive, true, status.text);
  });

  test("a Python plot shows as an image; an HTML result shows in a sandboxed frame where the guest's script does not run", async () => {
    const code = [
      'import matplotlib.pyplot as plt',
      'plt.plot([1, 3, 2])',
      'class Table:',
      '    def _repr_html_(self):',
      `        return '<table><tr><th>col</th></tr><tr><td>7</td></tr></table><p id="probe">static</p><script>document.getElementById("probe").textContent = "script ran"</script>'`,
      'Table()',
    ].join('\n');
    await page.getByLabel('Code', { exact: true }).fill(code);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const image = page.getByRole('img', { name: /^Result 1: PNG image/ });
    await image.waitFor({ timeout: 120_000 });
    assert.match((await image.getAttribute('src'))!, /^data:image\/png;base64,iVBORw0KGgo/);
    assert.ok((await image.evaluate((element: { naturalWidth: number }) => element.naturalWidth)) > 100, 'the PNG decodes');
    const frame = page.locator('iframe[title="Result 2: HTML"]');
    assert.equal(await frame.getAttribute('sandbox'), '', 'a sandbox with no permission at all');
    const inside = page.frameLocator('iframe[title="Result 2: HTML"]');
    assert.equal(await inside.locator('td').innerText(), '7');
    assert.equal(await inside.locator('#probe').innerText(), 'static', "the guest's script did not run");
    await screenshot('session');
    // Tall enough for the whole panel: Chromium leaves a frame out of a capture that reaches past the viewport.
    await page.setViewportSize({ width: VIEWPORT.width, height: 1400 });
    try {
      await page.locator('section[aria-labelledby="run-heading"]').screenshot({ path: path.join(SCREENSHOTS, 'console-run.png') });
    } finally {
      await page.setViewportSize(VIEWPORT);
    }
  });

  test('open the terminal, type `echo hi`, see hi; re-attach shows the scrollback', async () => {
    await page.getByRole('button', { name: 'New terminal' }).click();
    const terminal = page.getByTestId('terminal');
    await page
      .getByRole('status')
      .filter({ hasText: /: attached/ })
      .waitFor({ timeout: 60_000 });
    await terminal.click();
    await page.keyboard.type('echo hi\n', { delay: 20 });
    const rows = terminal.locator('.xterm-rows');
    // (Locators, not page functions: the console's CSP allows no eval, which waitForFunction would need.)
    await rows
      .locator('> div')
      .filter({ hasText: /^\s*hi\s*$/ })
      .first()
      .waitFor({ timeout: 60_000 });
    await screenshot('terminal');
    const attach = page.getByRole('button', { name: /^Detach / });
    await attach.click();
    await page
      .getByRole('button', { name: /^Attach / })
      .first()
      .click();
    await rows.locator('> div').filter({ hasText: 'echo hi' }).first().waitFor({ timeout: 30_000 });
    assert.ok((await rows.innerText()).includes('echo hi'));
  });

  test('upload a file and download it back', async () => {
    const content = `hello from the console ${Date.now()}\n`;
    await page.getByLabel('Upload to this directory').setInputFiles({ name: 'console-upload.txt', mimeType: 'text/plain', buffer: Buffer.from(content) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Uploaded console-upload.txt' }).waitFor({ timeout: 60_000 });
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download console-upload.txt' }).click();
    const file = await download;
    assert.equal(file.suggestedFilename(), 'console-upload.txt');
    assert.equal(fs.readFileSync(await file.path(), 'utf8'), content);
  });

  test('files: make a folder, upload into it, rename, delete; a conflict and a missing folder show the API error', async () => {
    const files = page.locator('section[aria-labelledby="files-heading"]');
    const hostile = '<img src=x onerror="document.title=1">.txt';
    await files.getByLabel('New folder').fill('console-dir');
    await files.getByRole('button', { name: 'Create folder' }).click();
    await files.getByRole('status').filter({ hasText: 'Created folder console-dir' }).waitFor({ timeout: 60_000 });
    await files.getByRole('button', { name: 'Open console-dir' }).click();
    await files.getByRole('table', { name: 'Files in /root/console-dir' }).waitFor();
    await files.getByText('This folder is empty.').waitFor();
    await files.getByLabel('Upload to this directory').setInputFiles([
      { name: 'first.txt', mimeType: 'text/plain', buffer: Buffer.from('one\n') },
      { name: hostile, mimeType: 'text/plain', buffer: Buffer.from('two\n') },
    ]);
    await files.getByRole('button', { name: 'Upload', exact: true }).click();
    await files.getByRole('status').filter({ hasText: 'Uploaded first.txt' }).waitFor({ timeout: 60_000 });
    // The guest's file name is text: no element was made of it.
    await files.getByRole('cell', { name: hostile, exact: true }).waitFor();
    assert.equal(await files.locator('img').count(), 0);
    assert.match(await files.locator('tr[data-file-name="first.txt"]').innerText(), /first\.txt\s+file\s+4 B/);

    await files.getByRole('button', { name: 'Rename first.txt' }).click();
    await files.getByLabel('New name for first.txt').fill('renamed.txt');
    await files.getByRole('button', { name: 'Save', exact: true }).click();
    await files.getByRole('status').filter({ hasText: 'Renamed first.txt to /root/console-dir/renamed.txt' }).waitFor();
    await files.locator('tr[data-file-name="first.txt"]').waitFor({ state: 'detached' });
    // A rename onto a name that is taken: the API's 409, and the form stays open to try another.
    await files.getByRole('button', { name: 'Rename renamed.txt' }).click();
    await files.getByLabel('New name for renamed.txt').fill(hostile);
    await files.getByRole('button', { name: 'Save', exact: true }).click();
    await files
      .getByRole('alert')
      .filter({ hasText: /exists .*\(CONFLICT\)/ })
      .waitFor();
    await files.getByRole('button', { name: 'Cancel', exact: true }).click();
    const stat = await call(server, 'GET', `/v1/sessions/${sessionId}/files/stat?path=/root/console-dir/renamed.txt`, { apiKey: alice.apiKey });
    assert.equal(stat.status, 200, stat.text);
    assert.equal(stat.body.size, 4);

    page.once('dialog', (dialog) => void dialog.accept());
    await files.getByRole('button', { name: 'Delete renamed.txt' }).click();
    await files.locator('tr[data-file-name="renamed.txt"]').waitFor({ state: 'detached' });
    // A folder that is not there: the API's 404; the folder shown stays.
    await files.getByLabel('Directory', { exact: true }).fill('/root/no-such-folder');
    await files.getByRole('button', { name: 'Open', exact: true }).click();
    await files.getByRole('alert').filter({ hasText: 'NOT_FOUND' }).waitFor();
    await files.getByRole('button', { name: 'Up', exact: true }).click();
    await files.getByRole('table', { name: 'Files in /root' }).waitFor();
    let confirmed = '';
    page.once('dialog', (dialog) => {
      confirmed = dialog.message();
      void dialog.accept();
    });
    await files.getByRole('button', { name: 'Delete console-dir' }).click();
    await files.locator('tr[data-file-name="console-dir"]').waitFor({ state: 'detached' });
    assert.match(confirmed, /everything in it/);
    const exists = await call(server, 'GET', `/v1/sessions/${sessionId}/files/exists?path=/root/console-dir`, { apiKey: alice.apiKey });
    assert.equal(exists.body.exists, false, exists.text);
    await files.screenshot({ path: path.join(SCREENSHOTS, 'console-files.png') });
  });

  test('snapshot the VM, pause it, resume it and clone it', async () => {
    await page.getByLabel('Snapshot name').fill('console-snap');
    await page.getByRole('button', { name: 'Snapshot', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Snapshot console-snap saved' }).waitFor({ timeout: 120_000 });
    const snapshots = await call(server, 'GET', '/v1/snapshots', { apiKey: alice.apiKey });
    assert.ok(JSON.stringify(snapshots.body).includes('console-snap'), snapshots.text);
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByTestId('vm-status').filter({ hasText: 'paused' }).waitFor({ timeout: 120_000 });
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByTestId('vm-status').filter({ hasText: 'active' }).waitFor({ timeout: 120_000 });
    // The same VM, with its files: the upload is still there.
    await page.getByLabel('Code', { exact: true }).fill("print(open('/root/console-upload.txt').read().startswith('hello from the console'))");
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page
      .getByTestId('run-output')
      .filter({ hasText: /^True\s*$/ })
      .waitFor({ timeout: VM_TIMEOUT_MS });
    // A clone: a new session of its own, started from a live snapshot of this VM.
    await page.getByRole('button', { name: 'Clone', exact: true }).click();
    const cloneLink = page.getByRole('list', { name: 'Clones' }).getByRole('link');
    await cloneLink.first().waitFor({ timeout: VM_TIMEOUT_MS });
    const cloneSession = (await cloneLink.first().getAttribute('href'))!.split('/').pop()!;
    assert.notEqual(cloneSession, sessionId);
    const clone = await call(server, 'GET', `/v1/sessions/status/${cloneSession}`, { apiKey: alice.apiKey });
    assert.equal(clone.body.vm_alive, true, clone.text);
    await call(server, 'POST', '/kill', { apiKey: alice.apiKey, json: { session_id: cloneSession } });
  });

  test('app URL and shares of a port; a session without a desktop says so', async () => {
    await page.getByLabel('Port', { exact: true }).fill('8000');
    await page.getByRole('button', { name: 'Get URL' }).click();
    await page.locator('section[aria-labelledby="apps-heading"] a', { hasText: /\/v1\/app\/|8000/ }).waitFor();
    await page.getByLabel('Expires in (minutes)').fill('30');
    await page.getByLabel('Public').check();
    await page.getByRole('button', { name: 'Share', exact: true }).click();
    const share = page.locator('section[aria-labelledby="shares-heading"] li', { hasText: 'Port 8000 (public)' });
    await share.waitFor();
    const listed = await call(server, 'GET', `/v1/shares?session_id=${sessionId}`, { apiKey: alice.apiKey });
    assert.equal(listed.body.shares.length, 1, listed.text);
    await share.getByRole('button', { name: 'Revoke' }).click();
    await share.waitFor({ state: 'detached' });
    assert.equal((await call(server, 'GET', `/v1/shares?session_id=${sessionId}`, { apiKey: alice.apiKey })).body.shares.length, 0);
    await page.getByRole('button', { name: 'Show the desktop' }).click();
    await page.locator('section[aria-labelledby="desktop-heading"] [role=alert]').waitFor();
  });

  test('a desktop session shows its screen in the console (noVNC on the VNC relay)', async () => {
    // Room for a desktop VM beside the sandbox, whatever the free plan's limits are.
    await server.services.users.setPlan('alice', 'pro');
    const created = await call(server, 'POST', '/v1/sessions/session', {
      apiKey: alice.apiKey,
      json: { template: 'desktop', screen_width: 1024, screen_height: 640, vm_lifetime_seconds: 600, metadata: { purpose: 'console-desktop' } },
    });
    assert.equal(created.status, 200, created.text);
    const desktopSession = created.body.session_id as string;
    try {
      await page.goto(`${server.baseUrl}/sandboxes/${desktopSession}`);
      await page.getByRole('button', { name: 'Show the desktop' }).click();
      await page.locator('[data-desktop-state="connected"]').waitFor({ timeout: VM_TIMEOUT_MS });
      // The remote screen is drawn: the canvas has the session's size and is not one flat colour.
      await waitUntil(
        'the desktop drawn',
        async () =>
          // A string: this file is compiled without the DOM's types.
          page.evaluate<boolean>(`(() => {
            const canvas = document.querySelector('.desktop-screen canvas');
            if (!canvas || canvas.width !== 1024 || canvas.height !== 640) return false;
            const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
            const colours = new Set();
            for (let i = 0; i < data.length && colours.size < 3; i += 4 * 97) colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
            return colours.size >= 3;
          })()`),
        60_000,
        500,
      );
      await page.locator('section[aria-labelledby="desktop-heading"]').screenshot({ path: path.join(SCREENSHOTS, 'desktop.png') });
    } finally {
      await call(server, 'POST', '/kill', { apiKey: alice.apiKey, json: { session_id: desktopSession } });
      await server.services.users.setPlan('alice', 'free');
    }
  });

  test("a page another user's VM serves through a path preview cannot use the console's cookie", async () => {
    // Bob serves a page that tries what a hostile page on the API's origin would: read the CSRF cookie and
    // create an API key with the visitor's session, then shares it publicly; Alice, signed in, opens it.
    const evil = `<!doctype html><title>hello</title><pre id="out">running</pre><script>
(async () => {
  let cookie;
  try { cookie = 'cookie:' + document.cookie; } catch (e) { cookie = 'cookie-blocked:' + e.name; }
  let created;
  try {
    const csrf = (/sandboxd_csrf=([^;]+)/.exec(cookie) || [])[1] || 'none';
    const r = await fetch('/v1/api-keys/', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: '{"description":"stolen"}' });
    created = 'status:' + r.status + ':' + (await r.text()).slice(0, 80);
  } catch (e) { created = 'fetch-blocked:' + e.name; }
  document.getElementById('out').textContent = 'done ' + cookie + ' ' + created;
})();
</script>`;
    const served = await call(server, 'POST', '/execute', {
      apiKey: bob.apiKey,
      json: {
        session_id: bobSession,
        language: 'bash',
        command: `mkdir -p /tmp/evil && cat > /tmp/evil/index.html <<'HTML'\n${evil}\nHTML\ncd /tmp/evil && (nohup python3 -m http.server 8765 >/dev/null 2>&1 &); for i in $(seq 50); do curl -s -o /dev/null localhost:8765/ && break; sleep 0.2; done`,
      },
    });
    assert.equal(served.status, 200, served.text);
    const share = await call(server, 'POST', '/v1/shares', { apiKey: bob.apiKey, json: { session_id: bobSession, port: 8765, is_public: true } });
    assert.equal(share.status, 201, share.text);
    const keysBefore = (await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey })).body.length;
    const visit = await context.newPage();
    const response = await visit.goto(share.body.url);
    assert.match(response!.headers()['content-security-policy'] ?? '', /sandbox/, 'path previews are sandboxed');
    await visit.locator('#out', { hasText: /^done / }).waitFor({ timeout: 30_000 });
    const report = await visit.locator('#out').textContent();
    await visit.close();
    assert.match(report!, /cookie-blocked:SecurityError/, report!);
    assert.doesNotMatch(report!, /status:2\d\d/, report!);
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: alice.apiKey })).body.length, keysBefore, 'no key was created for Alice');
  });

  test('create an API key (shown once) and revoke it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Description', { exact: true }).fill('made in the console');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').innerText()).trim();
    assert.match(key, /^sbx_/);
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: key })).status, 200, 'the new key works');
    await screenshot('api-keys');
    const row = page.locator('tr', { hasText: 'made in the console' });
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: /^Revoke / }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await call(server, 'GET', '/v1/api-keys/', { apiKey: key })).status, 401, 'the revoked key no longer works');
    await page.reload();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(await page.getByTestId('new-key').count(), 0, 'the key is not shown again');
  });

  test('add a webhook endpoint and see its test delivery', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL', { exact: true }).fill(`${receiver.url}/hooks`);
    await page.getByLabel('Events', { exact: true }).fill('execution.*');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByText(/Signing secret of we_/).waitFor();
    const endpointRow = page.locator('tr[data-endpoint-id]', { hasText: `${receiver.url}/hooks` });
    await endpointRow.getByRole('button', { name: 'Send test' }).click();
    const [received] = await receiver.waitForRequests(1, 30_000);
    assert.ok(received!.headers['webhook-signature'], 'signed');
    const delivery = page.locator('tr[data-status="succeeded"]');
    for (let i = 0; i < 40 && (await delivery.count()) === 0; i++) {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(500);
    }
    await delivery.first().getByRole('button', { name: 'Attempts' }).click();
    await page.locator('.attempts li', { hasText: /Attempt 1: delivered · HTTP 204/ }).waitFor();
    await screenshot('webhooks');
  });

  test('a vault: create it with a secret, rotate the secret, delete it; its value is never in the page nor in an answer', async () => {
    const value = `sk-console-first-${Date.now()}-value`;
    const rotated = `sk-console-rotated-${Date.now()}-value`;
    // Every API answer the page gets while this runs, read whole (not the event stream, which never ends).
    const bodies: Promise<{ url: string; text: string }>[] = [];
    const onResponse = (response: Response) => {
      if (new URL(response.url()).pathname.startsWith('/v1/') && !(response.headers()['content-type'] ?? '').startsWith('text/event-stream'))
        bodies.push(
          response.text().then(
            (text) => ({ url: response.url(), text }),
            () => ({ url: response.url(), text: '' }),
          ),
        );
    };
    const assertNowhere = async (secret: string) => {
      assert.ok(!(await page.content()).includes(secret), 'the value is not in the page');
      for (const { url, text } of await Promise.all(bodies)) assert.ok(!text.includes(secret), `the value is not in the answer of ${url}`);
    };
    page.on('response', onResponse);
    try {
      await page.getByRole('link', { name: 'Vaults', exact: true }).click();
      await page.getByRole('heading', { name: 'Vaults', level: 1 }).waitFor();
      const create = page.getByRole('form', { name: 'Create a vault' });
      await create.getByLabel('Name', { exact: true }).fill('console-vault');
      await create.getByLabel('Description', { exact: true }).fill('made in the console');
      await create.getByLabel('Secret name').fill('CONSOLE_TOKEN');
      assert.equal(await create.getByLabel('Value', { exact: true }).getAttribute('type'), 'password');
      await create.getByLabel('Value', { exact: true }).fill(value);
      await create.getByLabel('Allowed hosts').fill('api.example.com,\n*.example.org');
      await create.getByLabel('Injected as').selectOption('header');
      await create.getByLabel('Header name').fill('X-Console-Key');
      await create.getByRole('button', { name: 'Create vault' }).click();
      const row = page.locator('tr[data-vault-id]', { hasText: 'console-vault' });
      await row.filter({ hasText: 'CONSOLE_TOKEN → api.example.com, *.example.org' }).waitFor();
      assert.equal(await create.getByLabel('Value', { exact: true }).inputValue(), '', 'the value field is cleared');
      const vaultId = (await row.getAttribute('data-vault-id'))!;
      assert.match(vaultId, /^vlt_/);
      // The new vault is open: its secret with its hosts, and an empty request log.
      const details = page.locator(`section[data-vault-id="${vaultId}"]`);
      const secretRow = details.locator('tr[data-secret-name="CONSOLE_TOKEN"]');
      await secretRow.getByText('api.example.com', { exact: true }).waitFor();
      await secretRow.getByText('*.example.org', { exact: true }).waitFor();
      await secretRow.getByText('X-Console-Key', { exact: true }).waitFor();
      await details.getByText('No request has used this vault.').waitFor();
      await details.getByLabel('Outcome').selectOption('flagged');
      await details.getByText('No request has used this vault with the outcome flagged.').waitFor();
      const stored = await call(server, 'GET', `/v1/vaults/${vaultId}`, { apiKey: alice.apiKey });
      assert.equal(stored.status, 200, stored.text);
      assert.deepEqual(
        stored.body.secrets.map((s: { name: string; allowed_hosts: string[]; inject: unknown }) => [s.name, s.allowed_hosts, s.inject]),
        [['CONSOLE_TOKEN', ['api.example.com', '*.example.org'], { type: 'header', name: 'X-Console-Key', prefix: '' }]],
      );
      await assertNowhere(value);

      // Rotate: a new value and other hosts.
      const set = details.getByRole('form', { name: 'Add or rotate a secret' });
      await set.getByLabel('Secret name').fill('CONSOLE_TOKEN');
      await set.getByLabel('Value', { exact: true }).fill(rotated);
      await set.getByLabel('Allowed hosts').fill('api.example.net');
      await set.getByRole('button', { name: 'Save secret' }).click();
      await details.getByRole('status').filter({ hasText: 'Secret CONSOLE_TOKEN rotated.' }).waitFor();
      await secretRow.getByText('api.example.net', { exact: true }).waitFor();
      assert.equal(await set.getByLabel('Value', { exact: true }).inputValue(), '', 'the value field is cleared');
      const afterRotation = await call(server, 'GET', `/v1/vaults/${vaultId}`, { apiKey: alice.apiKey });
      assert.deepEqual(afterRotation.body.secrets[0].allowed_hosts, ['api.example.net']);
      assert.deepEqual(afterRotation.body.secrets[0].inject, { type: 'header', name: 'X-Console-Key', prefix: '' }, 'a rotation keeps the injection point');
      assert.ok(afterRotation.body.secrets[0].updated_at >= stored.body.secrets[0].updated_at);
      // Rename it.
      const rename = details.getByRole('form', { name: 'Rename the vault' });
      await rename.getByLabel('Description', { exact: true }).fill('the console test vault');
      await rename.getByRole('button', { name: 'Save', exact: true }).click();
      await row.filter({ hasText: 'the console test vault' }).waitFor();
      await assertNowhere(value);
      await assertNowhere(rotated);
      await details.getByLabel('Outcome').selectOption('');
      await details.getByText('No request has used this vault.').waitFor();
      await page.evaluate('window.scrollTo(0, 0)');
      await screenshot('console-vaults');

      // A vault of the same name: the API's 409, shown on the form.
      await create.getByLabel('Name', { exact: true }).fill('console-vault');
      await create.getByRole('button', { name: 'Create vault' }).click();
      await create.getByRole('alert').filter({ hasText: 'already' }).waitFor();
      // The sandbox form offers the vault to attach (vault_ids).
      await page.getByRole('link', { name: 'Sandboxes', exact: true }).click();
      await page.getByLabel('Vaults', { exact: true }).locator('option', { hasText: 'console-vault (CONSOLE_TOKEN)' }).waitFor({ state: 'attached' });
      assert.equal(
        await page.getByLabel('Vaults', { exact: true }).locator('option', { hasText: 'console-vault (CONSOLE_TOKEN)' }).getAttribute('value'),
        vaultId,
      );
      await page.getByRole('link', { name: 'Vaults', exact: true }).click();
      await page.getByRole('button', { name: 'Manage console-vault' }).click();
      await details.waitFor();

      // Delete the secret, then the vault.
      page.once('dialog', (dialog) => void dialog.accept());
      await secretRow.getByRole('button', { name: 'Delete the secret CONSOLE_TOKEN' }).click();
      await secretRow.waitFor({ state: 'detached' });
      await details.getByText('No secret in this vault.').waitFor();
      assert.deepEqual((await call(server, 'GET', `/v1/vaults/${vaultId}`, { apiKey: alice.apiKey })).body.secrets, []);
      page.once('dialog', (dialog) => void dialog.accept());
      await details.getByRole('button', { name: 'Delete vault' }).click();
      await row.waitFor({ state: 'detached' });
      await details.waitFor({ state: 'detached' });
      assert.equal((await call(server, 'GET', `/v1/vaults/${vaultId}`, { apiKey: alice.apiKey })).status, 404);
      await assertNowhere(value);
      await assertNowhere(rotated);
      assert.ok(bodies.length > 0);
    } finally {
      page.off('response', onResponse);
    }
  });

  test('approve a CLI login started by `sandbox login`', async () => {
    const running = startCli(['login', '--no-browser', '--json', '--hostname', 'console-test-host'], home.env());
    const [url, userCode] = await waitFor(running.stderrSoFar, /(http:\/\/\S+\/cli-login\?user_code=([A-Z]{4}-[A-Z]{4}))/).then((m) => [m[1]!, m[2]!]);
    await page.goto(url!);
    await page.getByRole('heading', { name: 'Approve a command-line login' }).waitFor();
    assert.equal(await page.getByLabel('Code shown by your terminal').inputValue(), userCode);
    await screenshot('cli-login');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Login approved' }).waitFor();
    assert.match(await page.getByRole('status').innerText(), /console-test-host/);
    const result = await running.done;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.json.logged_in, true);
    assert.equal(result.json.username, 'alice');
  });

  test('the audit log shows what was done', async () => {
    await page.goto(`${server.baseUrl}/audit`);
    await page.locator('tr', { hasText: 'api_key.create' }).first().waitFor();
    await page.locator('tr', { hasText: 'cli_auth.approve' }).first().waitFor();
    await screenshot('audit');
  });

  test("usage: today's executions in the charts", async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    const executions = page.getByRole('figure').filter({ has: page.getByRole('heading', { name: 'Executions' }) });
    await executions.getByText(/^[1-9]\d* executions in 14 days$/).waitFor();
    assert.equal(await executions.locator('rect').count(), 14);
    await screenshot('usage');
  });

  test('administrators see users, plans and nodes; other users do not', async () => {
    assert.equal(await page.getByRole('link', { name: 'Users' }).count(), 0, 'no admin links for alice');
    await page.goto(`${server.baseUrl}/admin/users`);
    await page.getByRole('alert').filter({ hasText: 'FORBIDDEN' }).waitFor();
    const admin = await browser.newContext({ viewport: VIEWPORT });
    try {
      const adminPage = await admin.newPage();
      await adminPage.goto(`${server.baseUrl}/admin/users`);
      await adminPage.getByLabel('Username').fill('root-admin');
      await adminPage.getByLabel('Password').fill('root-admin-password');
      await adminPage.getByRole('button', { name: 'Sign in' }).click();
      await adminPage.getByRole('heading', { name: 'Users and plans' }).waitFor();
      for (const name of ['alice', 'bob', 'root-admin']) await adminPage.getByRole('cell', { name, exact: true }).waitFor();
      // An administrator moves bob to another plan; the server has it, and the audit log says who did.
      const before = (await server.services.users.getByUsername('bob'))!.plan;
      const other = before === 'pro' ? 'free' : 'pro';
      await adminPage.getByLabel('Plan of bob').selectOption(other);
      await waitUntil('bob on the new plan', async () => (await server.services.users.getByUsername('bob'))!.plan === other, 10_000, 100);
      await adminPage.getByLabel('Plan of bob').selectOption(before);
      await waitUntil('bob back on his plan', async () => (await server.services.users.getByUsername('bob'))!.plan === before, 10_000, 100);
      assert.equal(
        (await call(server, 'PATCH', `/v1/admin/users/${bob.userId}`, { apiKey: alice.apiKey, json: { plan: 'pro' } })).status,
        403,
        'not for other users',
      );
      await adminPage.getByRole('link', { name: 'Nodes' }).click();
      await adminPage.getByRole('cell', { name: 'live' }).waitFor();
      await adminPage.screenshot({ path: path.join(SCREENSHOTS, 'admin-nodes.png') });
    } finally {
      await admin.close();
    }
  });

  test('works in a narrow window: no sideways scrolling of the page', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      for (const url of ['/sandboxes', '/webhooks', '/vaults', `/sandboxes/${sessionId}`]) {
        await page.goto(server.baseUrl + url);
        await page.getByRole('heading', { level: 1 }).waitFor();
        // Wide tables scroll inside their own box; the page itself fits.
        const [scrollWidth, clientWidth] = (await page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]')) as number[];
        assert.ok(scrollWidth! <= clientWidth!, `${url}: ${scrollWidth} > ${clientWidth}`);
      }
      await screenshot('narrow-session');
    } finally {
      await page.setViewportSize(VIEWPORT);
    }
  });

  test('sign out ends the session; an API key signs in too', async () => {
    await page.goto(`${server.baseUrl}/audit`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/);
    assert.equal(
      (await context.cookies(server.baseUrl)).find((c) => c.name === 'sandboxd_session'),
      undefined,
    );
    await page.getByRole('tab', { name: 'API key' }).click();
    await page.getByLabel('API key', { exact: true }).fill(alice.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the sign-out happened.
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const session = (await context.cookies(server.baseUrl)).find((c) => c.name === 'sandboxd_session')!;
    assert.ok(!session.value.includes(alice.apiKey), 'the key is not kept in the cookie');
  });
});
