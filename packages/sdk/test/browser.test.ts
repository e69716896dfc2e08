// test-order: last (Chromium in a VM keeps both cores busy: scripts/run-tests.mjs runs it after the light lane is done)
/**
 * `client.browser` against the real server and its browser service, on real VMs: one session (a Chromium in a VM
 * of its own) on pages a server in a network namespace serves, and one render in a VM
 * of its own, shared by the cases below (under TCG each browser operation takes seconds). Every method sends what
 * the routes take and reads what they answer (both checked against the served document): options arrive in
 * snake_case and change the page as they should, images arrive as bytes that decode as PNG of the size asked
 * for, each browser error code becomes its class, closing is true once and then false. The error table is also
 * checked on its own, without a server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PNG } from 'pngjs';
import { DEFAULT_PLANS } from '../../server/src/core/plans.ts';
import { startNetnsWebServer, type NetnsWebServer } from '../../server/test/helpers/netns-web.ts';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import {
  BrowserError,
  BrowserInteractionError,
  BrowserNavigationError,
  BrowserSessionError,
  BrowserTimeoutError,
  ElementNotFoundError,
  errorFor,
  NotFoundError,
  QuotaExceededError,
  RateLimitError,
  Sandboxd,
  screenshotBytes,
  type BrowserSession,
  type OperationKind,
} from '../src/index.ts';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Width and height of PNG bytes, decoded whole (a truncated or corrupt image throws). */
function pngSize(bytes: Uint8Array): [number, number] {
  assert.deepEqual([...bytes.subarray(0, 8)], PNG_SIGNATURE, 'the PNG signature');
  const image = PNG.sync.read(Buffer.from(bytes));
  return [image.width, image.height];
}

describe('client.browser against the server, on real VMs', { timeout: 20 * 60_000 }, () => {
  let web: NetnsWebServer;
  let server: TestServer;
  let client: Sandboxd;
  let other: Sandboxd;
  let browserless: Sandboxd;
  let page: BrowserSession;

  before(async () => {
    web = await startNetnsWebServer();
    server = await startTestServer({
      config: {
        // No pools: the session's and the render's VMs are restored when asked for. Under TCG a pooled browser
        // VM's warm-up is a page's worth of work, and each take starts another that competes with the test's own
        // page (the server's browser test has the pool's test); nothing here uses a plain sandbox VM.
        browserPoolSize: 0,
        poolSize: 0,
        plans: { ...DEFAULT_PLANS, nobrowser: { ...DEFAULT_PLANS.free!, maxBrowserSessions: 0 } },
      },
    });
    const make = (apiKey: string) => new Sandboxd({ baseUrl: server.baseUrl, apiKey, maxRetries: 0 });
    client = make((await server.createUserWithKey('surfer', 'pro')).apiKey);
    other = make((await server.createUserWithKey('lurker', 'pro')).apiKey);
    browserless = make((await server.createUserWithKey('walker', 'nobrowser')).apiKey);
    page = await client.browser.createSession({ viewportWidth: 800, viewportHeight: 600, userAgent: 'sandboxd-sdk-test/1.0' });
  });
  after(async () => {
    await page?.close().catch(() => false);
    await server?.close();
    await web?.stop();
  });

  test('a session: created, listed, read; navigate, fill, type, click, extract and content change and read a real form', async () => {
    assert.deepEqual([page.created?.viewport_width, page.created?.viewport_height, page.created?.status], [800, 600, 'active']);
    assert.deepEqual(
      (await client.browser.listSessions()).map((s) => s.session_id),
      [page.id],
    );
    assert.deepEqual(await other.browser.listSessions(), []);

    const navigated = await page.navigate(`${web.baseUrl}/form`, { waitTimeout: 60_000, waitUntil: 'load' });
    assert.equal(navigated.success, true);
    assert.equal(navigated.data?.title, 'Form');
    const seen = (await web.requests()).filter((r) => r.path === '/form');
    assert.equal(seen.at(-1)?.userAgent, 'sandboxd-sdk-test/1.0', 'the user agent the session was created with');
    const info = await page.info();
    assert.deepEqual([info.status, info.url], ['active', `${web.baseUrl}/form`]);

    await page.fill('#name', 'Ada Lovelace');
    await page.type('#email', 'ada@example.com', { delay: 10 });
    await page.click('#counter-btn', { clickCount: 2 });
    const fields = await page.extract({ selector: 'input', attributes: ['id', 'type'], maxElements: 2 });
    assert.deepEqual(
      fields.elements.map((e) => [e.attributes.id, e.attributes.type, e.value]),
      [
        ['name', 'text', 'Ada Lovelace'],
        ['email', 'email', 'ada@example.com'],
      ],
      'max_elements, attributes and the values filled and typed',
    );
    assert.equal((await page.extract({ selector: '#count' })).elements[0]?.text, '2', 'click_count 2 clicked twice');
    await page.click('#submit');
    const submitted = JSON.parse((await page.extract({ selector: '#result' })).elements[0]!.text);
    assert.deepEqual([submitted.name, submitted.email], ['Ada Lovelace', 'ada@example.com']);

    const content = await page.content({ maxAnchors: 3, includeInteractive: false });
    assert.equal(content.readable_content.title, 'Form');
    assert.match(content.readable_content.content, /Ada Lovelace/);
    assert.deepEqual(content.interactive_elements, []);
    assert.ok(content.content_anchors.length <= 3);
    assert.throws(() => page.scroll({} as never), TypeError, 'neither selector nor x/y is refused before sending');
  });

  test('a screenshot arrives as PNG bytes of the viewport', async () => {
    const shot = await page.screenshot();
    assert.deepEqual([shot.format, shot.width, shot.height], ['png', 800, 600]);
    assert.ok(shot.bytes instanceof Uint8Array);
    assert.deepEqual(pngSize(shot.bytes), [800, 600]);
    assert.ok(shot.result.usage_info.screenshots_taken >= 1);
  });

  test("browser errors become their classes: element not found with its selector, timeout, navigation, another user's session", async () => {
    const missing = await page.click('#no-such-button', { timeout: 1500 }).catch((e: unknown) => e);
    assert.ok(missing instanceof ElementNotFoundError, String(missing));
    assert.ok(missing instanceof BrowserInteractionError && missing instanceof BrowserError);
    assert.equal(missing.selector, '#no-such-button');
    assert.deepEqual([missing.status, missing.code], [404, 'ELEMENT_NOT_FOUND']);
    const slow = await page.wait('selector', { selector: '#never-appears', timeout: 1500 }).catch((e: unknown) => e);
    assert.ok(slow instanceof BrowserTimeoutError, String(slow));
    assert.deepEqual([slow.status, slow.code], [408, 'BROWSER_TIMEOUT']);
    const refused = await page.navigate(`http://${web.serverAddress}:81/`).catch((e: unknown) => e);
    assert.ok(refused instanceof BrowserNavigationError, String(refused));
    assert.deepEqual([refused.status, refused.code], [400, 'NAVIGATION_FAILED']);

    const notMine = other.browser.session(page.id);
    const attempts = [() => notMine.click('#name'), () => notMine.navigate(`${web.baseUrl}/form`), () => notMine.screenshot(), () => notMine.info()];
    for (const attempt of attempts) {
      const error = await attempt().catch((e: unknown) => e);
      assert.ok(error instanceof BrowserSessionError, String(error));
      assert.ok(!(error instanceof ElementNotFoundError), 'a session that is not found is not an element that is not found');
    }
    assert.equal(await notMine.close(), false, "another user's session reads as already closed");
    assert.equal((await page.info()).status, 'active', 'the session is still open after its errors');
  });

  test('a render answers its screenshot as bytes, and keeps it by usage id; usage counts it', async () => {
    const image = await client.browser.renderScreenshot({ url: `${web.baseUrl}/page/2`, width: 640, height: 480, returnText: true, waitTimeout: 60_000 });
    assert.equal(image.format, 'png');
    assert.deepEqual(pngSize(image.bytes), [640, 480]);
    assert.deepEqual([image.result.title, image.result.width, image.result.height, image.result.status_code], ['Page 2', 640, 480, 200]);
    assert.match(image.result.text ?? '', /Page 2/);
    assert.equal(image.result.html, null, 'no HTML unless asked');
    assert.deepEqual(screenshotBytes(image.result).bytes, image.bytes);
    assert.throws(() => screenshotBytes({ ...image.result, screenshot: null, format: null }), /no screenshot/);

    const stored = await client.browser.screenshot(image.result.usage_id);
    assert.deepEqual([stored.format, stored.record.content_type], ['png', 'image/png']);
    assert.deepEqual(stored.bytes, image.bytes, 'the stored screenshot is the one answered');
    await assert.rejects(other.browser.screenshot(image.result.usage_id), NotFoundError, "another user's stored screenshot");

    const history = await client.browser.usageHistory({ limit: 1 });
    assert.deepEqual([history.items.length, history.limit, history.offset], [1, 1, 0]);
    assert.deepEqual([history.items[0]?.usage_id, history.items[0]?.kind, history.items[0]?.has_screenshot], [image.result.usage_id, 'render', true]);
    assert.equal(history.total, 2, 'the render and the open session');
    const usage = await client.browser.usage();
    assert.deepEqual([usage.renders, usage.sessions, usage.active_sessions], [1, 1, 1]);
  });

  test('capabilities, auth test, and credentials (never the password back; an update sends only what changed)', async () => {
    const capabilities = await client.browser.capabilities();
    assert.equal(capabilities.engine, 'chromium');
    assert.equal(capabilities.max_sessions, DEFAULT_PLANS.pro!.maxBrowserSessions);
    const me = await client.browser.authTest();
    assert.deepEqual([me.authenticated, me.username, me.browser_available], [true, 'surfer', true]);

    const credential = await client.browser.credentials.create({
      name: 'shop',
      username: 'me@example.com',
      password: 'p4ss-w0rd',
      allowedHosts: ['shop.example.com'],
    });
    assert.ok(!JSON.stringify(credential).includes('p4ss-w0rd'));
    assert.deepEqual([credential.name, credential.username, credential.allowed_hosts], ['shop', 'me@example.com', ['shop.example.com']]);
    assert.deepEqual(
      (await client.browser.credentials.list()).map((c) => c.credential_id),
      [credential.credential_id],
    );
    const updated = await client.browser.credentials.update(credential.credential_id, { allowedHosts: ['*.example.com'] });
    assert.deepEqual([updated.allowed_hosts, updated.username], [['*.example.com'], 'me@example.com'], 'the username was not sent, so it is unchanged');
    assert.deepEqual((await client.browser.credentials.get(credential.credential_id)).allowed_hosts, ['*.example.com']);
    await assert.rejects(other.browser.credentials.get(credential.credential_id), NotFoundError);
    await assert.rejects(other.browser.credentials.delete(credential.credential_id), NotFoundError);
    await client.browser.credentials.delete(credential.credential_id);
    await assert.rejects(client.browser.credentials.get(credential.credential_id), NotFoundError);
    assert.deepEqual(await client.browser.credentials.list(), []);
  });

  test('a plan without browser sessions: QuotaExceededError (not a RateLimitError) on session create and render', async () => {
    const refused = await browserless.browser.createSession().catch((e: unknown) => e);
    assert.ok(refused instanceof QuotaExceededError, String(refused));
    assert.ok(!(refused instanceof RateLimitError));
    assert.deepEqual([refused.status, refused.code], [429, 'QUOTA_EXCEEDED']);
    const render = await browserless.browser.render({ html: '<p>x</p>' }).catch((e: unknown) => e);
    assert.ok(render instanceof QuotaExceededError, String(render));
    assert.deepEqual(await browserless.browser.listSessions(), []);
  });

  test('closing is true once, then false; a closed session is a BrowserSessionError', async () => {
    assert.equal(await page.close(), true);
    assert.equal(await page.close(), false);
    assert.equal(await client.browser.closeSession(page.id), false);
    assert.equal((await client.browser.getSession(page.id)).status, 'closed');
    const closed = await page.click('#name').catch((e: unknown) => e);
    assert.ok(closed instanceof BrowserSessionError, String(closed));
    assert.deepEqual(await client.browser.listSessions(), []);
  });
});

describe('the error table: browser rows', () => {
  const classOf = (status: number, code: string | undefined, kind: OperationKind | undefined, selector?: string) =>
    errorFor({ status, code, kind }, 'm', { status, ...(code ? { code } : {}) }, selector ? { selector } : {});

  test('codes decide wherever they come from; the kind decides a plain 404, 408 or 429', () => {
    const cases: [number, string | undefined, OperationKind | undefined, string][] = [
      [404, 'ELEMENT_NOT_FOUND', 'browser.element', 'ElementNotFoundError'],
      [404, 'ELEMENT_NOT_FOUND', 'browser.render', 'ElementNotFoundError'],
      [404, 'NOT_FOUND', 'browser.element', 'BrowserSessionError'],
      [404, 'NOT_FOUND', 'browser.navigate', 'BrowserSessionError'],
      [404, 'NOT_FOUND', 'browser', 'BrowserSessionError'],
      [404, 'NOT_FOUND', undefined, 'NotFoundError'],
      [408, 'BROWSER_TIMEOUT', 'browser.navigate', 'BrowserTimeoutError'],
      [408, 'BROWSER_TIMEOUT', 'browser.render', 'BrowserTimeoutError'],
      [408, undefined, 'browser.element', 'BrowserTimeoutError'],
      [400, 'NAVIGATION_FAILED', 'browser.navigate', 'BrowserNavigationError'],
      [400, 'NAVIGATION_FAILED', 'browser.render', 'BrowserNavigationError'],
      [400, 'BAD_REQUEST', 'browser.navigate', 'SandboxdError'],
      [429, 'QUOTA_EXCEEDED', 'browser.session.create', 'QuotaExceededError'],
      [429, undefined, 'browser.session.create', 'QuotaExceededError'],
      [429, 'RATE_LIMITED', 'browser.render', 'RateLimitError'],
      [503, 'SERVICE_UNAVAILABLE', 'browser', 'NetworkError'],
    ];
    assert.deepEqual(
      cases.map(([status, code, kind]) => classOf(status, code, kind).name),
      cases.map(([, , , name]) => name),
    );
    const element = classOf(404, 'ELEMENT_NOT_FOUND', 'browser.element', '#buy');
    assert.ok(element instanceof ElementNotFoundError);
    assert.equal(element.selector, '#buy');
  });
});
