/**
 * The console's Apps page in a real browser (Debian's Chromium through playwright-core) against a real server with
 * real VMs: an app deployed twice with `sandbox deploy` is listed with its status, live version and URL; its page
 * shows the deployments, the app's output streamed as requests reach it, a version's deployment log, and a Rollback
 * button that brings the earlier version back (the URL then serves it); Restart starts the live version again.
 * Another user's app is never shown. Its screenshot goes to docs/screenshots/apps.png for docs/guides/apps.md.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { makeHome, runCli, type CliHome } from '../../cli/test/run-cli.ts';
import { rawRequest } from '../../server/test/helpers/raw-http.ts';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SCREENSHOTS = path.join(root, 'docs', 'screenshots');
const DIST = path.join(root, 'packages', 'dashboard', 'dist');
/** A deployment under TCG: a VM, the upload, a snapshot, the start and the health check. */
const DEPLOY_TIMEOUT_MS = 10 * 60_000;

describe('the Apps page of the console', { timeout: 40 * 60_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;
  let folder: string;
  let url: URL;
  let alice: { apiKey: string; password: string };

  const served = async () => (await rawRequest(Number(url.port), '/', { host: url.host })).body.toString();
  const deploy = async (text: string) => {
    fs.writeFileSync(path.join(folder, 'index.html'), `${text}\n`);
    const deployed = await runCli(['deploy', folder], env);
    assert.equal(deployed.code, 0, deployed.stderr);
    url = new URL(deployed.stdout.trim());
  };

  before(async () => {
    assert.ok(fs.existsSync(path.join(DIST, 'index.html')), 'the console is built (node scripts/build-dashboard.mjs; setup does it)');
    server = await startTestServer();
    alice = await server.createUserWithKey('alice');
    const bob = await server.createUserWithKey('bob');
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: alice.apiKey });
    folder = path.join(home.home, 'site');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'sandboxd.yaml'), 'port: 8000\nstart: python3 -m http.server 8000\nhealth_check: /\n');
    await deploy('site v1');
    await deploy('site v2');
    // Bob's app has a name of its own; Alice's page must never show it.
    fs.writeFileSync(path.join(folder, 'sandboxd.yaml'), 'name: bobs-app\nport: 8000\nstart: python3 -m http.server 8000\n');
    const bobs = await runCli(['deploy', folder, '--no-wait'], home.env({ SANDBOXD_API_KEY: bob.apiKey }));
    assert.equal(bobs.code, 0, bobs.stderr);
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(30_000);
  });

  after(async () => {
    await browser?.close();
    home?.remove();
    await server?.close();
  });

  test('the list: name, status, live version and URL; only your apps', async () => {
    await page.goto(`${server.baseUrl}/apps`);
    await page.waitForURL(/\/sign-in\?next=%2Fapps/);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(alice.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Apps', exact: true }).waitFor();
    const row = page.locator('tr[data-app="site"]');
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /live/);
    assert.match(text, /v2/);
    assert.ok(text.includes(url.href), text);
    assert.equal(await page.locator('tr[data-app="bobs-app"]').count(), 0);
    assert.ok(!(await page.content()).includes('bobs-app'));
  });

  test("an app's page: its deployments, and its output streamed as requests come", async () => {
    await page.getByRole('link', { name: 'site', exact: true }).click();
    await page.waitForURL(/\/apps\/site$/);
    await page.locator('tr[data-version="2"][data-status="live"]').waitFor();
    await page.locator('tr[data-version="1"][data-status="superseded"]').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Roll back to v2' }).count(), 0, 'no rollback to the live version');
    // A request to the app shows up in the output that the page is following.
    assert.equal(await served(), 'site v2\n');
    await page.getByLabel('Output of site').filter({ hasText: '"GET / HTTP/1.1" 200' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Log of v2' }).click();
    const log = page.getByLabel('Deployment log of v2');
    await log.waitFor();
    await page.locator('pre[aria-label="Deployment log of v2"][data-ended="true"]').waitFor();
    assert.notEqual((await log.innerText()).trim(), '(no log yet)');
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'apps.png') });
  });

  test('Rollback brings v1 back at the same URL, its deployment log followed', { timeout: DEPLOY_TIMEOUT_MS }, async () => {
    await page.getByRole('button', { name: 'Roll back to v1' }).click();
    await page.getByLabel('Deployment log of v1').waitFor();
    await page.locator('tr[data-version="1"][data-status="live"]').waitFor({ timeout: DEPLOY_TIMEOUT_MS });
    await page.locator('tr[data-version="2"][data-status="superseded"]').waitFor();
    assert.equal(await served(), 'site v1\n');
    assert.equal(await page.getByRole('alert').count(), 0);
  });

  test('Restart starts the live version again', { timeout: DEPLOY_TIMEOUT_MS }, async () => {
    await page.getByRole('button', { name: 'Restart' }).click();
    // The restart's record is followed, then the app is live again on v1.
    await page.getByRole('heading', { name: 'Log of v1' }).waitFor();
    await page.locator('pre[aria-label="Deployment log of v1"][data-ended="true"]').waitFor({ timeout: DEPLOY_TIMEOUT_MS });
    await page.locator('tr[data-version="1"][data-status="live"]').waitFor({ timeout: DEPLOY_TIMEOUT_MS });
    assert.equal(await served(), 'site v1\n');
    assert.equal(await page.getByRole('alert').count(), 0);
  });
});
