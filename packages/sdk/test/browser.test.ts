/**
 * `client.browser` against the real server, whose browser service is a stand-in (server/test/helpers/fake-browser.ts):
 * every method sends what the routes take and reads what they answer (both checked against the served document),
 * images arrive as bytes, closing twice is true then false, and each browser error code becomes its class, also
 * straight from the error table. What a real browser does is tested with the browser service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeBrowser, FAKE_JPEG_BASE64, FAKE_PNG_BASE64, type FakeBrowser } from '../../server/test/helpers/fake-browser.ts';
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

const PNG = new Uint8Array(Buffer.from(FAKE_PNG_BASE64, 'base64'));
const JPEG = new Uint8Array(Buffer.from(FAKE_JPEG_BASE64, 'base64'));

describe('client.browser against the server (stand-in browser service)', () => {
  let server: TestServer;
  let browser: FakeBrowser;
  let client: Sandboxd;
  let other: Sandboxd;
  let page: BrowserSession;

  before(async () => {
    browser = fakeBrowser({ maxSessions: 2 });
    server = await startTestServer({ browser });
    const make = (apiKey: string) => new Sandboxd({ baseUrl: server.baseUrl, apiKey, maxRetries: 0 });
    client = make((await server.createUserWithKey('surfer', 'pro')).apiKey);
    other = make((await server.createUserWithKey('lurker', 'pro')).apiKey);
    page = await client.browser.createSession({ viewportWidth: 1024, viewportHeight: 768 });
  });
  after(async () => {
    await page?.close().catch(() => false);
    await server?.close();
  });

  const sent = (method: string) => [...browser.calls].reverse().find((c) => c.method === method)?.request as Record<string, unknown>;

  test('a session: created, listed, read; interactions send snake_case with only what was given', async () => {
    assert.equal(page.created?.viewport_width, 1024);
    assert.deepEqual((await client.browser.listSessions()).map((s) => s.session_id), [page.id]);
    assert.equal((await page.info()).status, 'active');

    const navigated = await page.navigate('https://example.com/', { waitTimeout: 5000, waitUntil: 'networkidle' });
    assert.deepEqual(navigated.data, { url: 'https://example.com/', title: 'Fake page' });
    assert.deepEqual([sent('navigate').wait_timeout, sent('navigate').wait_until], [5000, 'networkidle']);
    await page.fill('#email', 'me@example.com');
    await page.type('#search', 'otters', { delay: 20 });
    assert.deepEqual([sent('type').text, sent('type').delay], ['otters', 20]);
    await page.click('#go', { clickCount: 2, button: 'right' });
    assert.deepEqual([sent('click').click_count, sent('click').button], [2, 'right']);
    assert.deepEqual((await page.scroll({ y: 600 })).data, { x: 0, y: 600 });
    assert.equal((await page.scroll({ selector: '#footer' })).success, true);
    await page.wait('selector', { selector: '#results', timeout: 1000 });
    assert.deepEqual([sent('wait').condition, sent('wait').selector, sent('wait').timeout], ['selector', '#results', 1000]);
    await page.hover('#menu');
    await page.keypress('Enter', { selector: '#search' });
    assert.equal(sent('keypress').key, 'Enter');
    const extracted = await page.extract({ selector: 'h1', attributes: ['id'], maxElements: 5 });
    assert.deepEqual(extracted.elements.map((e) => [e.tag, e.attributes]), [['h1', { id: 'title' }]]);
    assert.equal(sent('extract').max_elements, 5);
    const content = await page.content({ maxAnchors: 3, includeInteractive: false });
    assert.deepEqual(content.interactive_elements, []);
    assert.equal(content.readable_content.title, 'Fake page');
    assert.throws(() => page.scroll({} as never), TypeError, 'neither selector nor x/y is refused before sending');
  });

  test('screenshots arrive as bytes: of the session, of a render, and stored by usage id', async () => {
    const shot = await page.screenshot();
    assert.deepEqual([shot.format, shot.width, shot.height], ['png', 1, 1]);
    assert.deepEqual(shot.bytes, PNG);
    assert.deepEqual([...shot.bytes.slice(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    const jpeg = await page.screenshot({ format: 'jpeg', quality: 80, fullPage: true });
    assert.deepEqual([jpeg.format, sent('screenshot').quality, sent('screenshot').full_page], ['jpeg', 80, true]);
    assert.deepEqual(jpeg.bytes, JPEG);

    const rendered = await client.browser.render({ url: 'https://example.com/', width: 800, height: 600, returnText: true });
    assert.deepEqual([sent('render').width, sent('render').height, sent('render').return_text], [800, 600, true]);
    assert.equal(rendered.text, 'Fake page');
    assert.deepEqual(screenshotBytes(rendered).bytes, PNG);
    const image = await client.browser.renderScreenshot({ html: '<h1>hi</h1>', format: 'jpeg' });
    assert.deepEqual(image.bytes, JPEG);
    const stored = await client.browser.screenshot(image.result.usage_id);
    assert.deepEqual([stored.format, stored.record.content_type], ['jpeg', 'image/jpeg']);
    assert.deepEqual(stored.bytes, JPEG);
    await assert.rejects(other.browser.screenshot(image.result.usage_id), NotFoundError, "another user's stored screenshot");
    assert.throws(() => screenshotBytes({ ...rendered, screenshot: null, format: null }), /no screenshot/);

    const history = await client.browser.usageHistory({ limit: 1 });
    assert.deepEqual([history.items.length, history.total, history.limit, history.offset], [1, 2, 1, 0]);
    assert.equal((await client.browser.usage()).renders, 2);
  });

  test('capabilities, auth test, credentials (never the password back) and fill-credential', async () => {
    assert.equal((await client.browser.capabilities()).engine, 'chromium');
    const me = await client.browser.authTest();
    assert.deepEqual([me.authenticated, me.username], [true, 'surfer']);
    const credential = await client.browser.credentials.create({ name: 'shop', username: 'me@example.com', password: 'p4ss-w0rd', allowedHosts: ['shop.example.com'] });
    assert.ok(!JSON.stringify(credential).includes('p4ss-w0rd'));
    assert.deepEqual((await client.browser.credentials.list()).map((c) => c.credential_id), [credential.credential_id]);
    const updated = await client.browser.credentials.update(credential.credential_id, { allowedHosts: ['*.example.com'] });
    assert.deepEqual(updated.allowed_hosts, ['*.example.com']);
    assert.deepEqual(sent('updateCredential'), { credentialId: credential.credential_id, allowed_hosts: ['*.example.com'] }, 'only the changed field is sent');
    const filled = await page.fillCredential(credential.credential_id, { submit: true });
    assert.equal(filled.success, true);
    await assert.rejects(other.browser.credentials.get(credential.credential_id), NotFoundError);
    await client.browser.credentials.delete(credential.credential_id);
    await assert.rejects(client.browser.credentials.get(credential.credential_id), NotFoundError);
  });

  test('browser errors become their classes: element not found with its selector, timeout, navigation, session', async () => {
    const missing = await page.click('#missing').catch((e: unknown) => e);
    assert.ok(missing instanceof ElementNotFoundError, String(missing));
    assert.ok(missing instanceof BrowserInteractionError && missing instanceof BrowserError);
    assert.equal(missing.selector, '#missing');
    assert.deepEqual([missing.status, missing.code], [404, 'ELEMENT_NOT_FOUND']);
    const slow = await page.fill('#slow', 'x').catch((e: unknown) => e);
    assert.ok(slow instanceof BrowserTimeoutError, String(slow));
    assert.equal(slow.code, 'BROWSER_TIMEOUT');
    const nowhere = await page.navigate('https://unreachable.invalid/').catch((e: unknown) => e);
    assert.ok(nowhere instanceof BrowserNavigationError, String(nowhere));
    assert.deepEqual([nowhere.status, nowhere.code], [400, 'NAVIGATION_FAILED']);
    const renderMissing = await client.browser.render({ html: '<p>x</p>', actions: [{ type: 'click', selector: '#missing' }] }).catch((e: unknown) => e);
    assert.ok(renderMissing instanceof ElementNotFoundError, String(renderMissing));
    const renderSlow = await client.browser.render({ url: 'https://slow.example/' }).catch((e: unknown) => e);
    assert.ok(renderSlow instanceof BrowserTimeoutError, String(renderSlow));

    const notMine = other.browser.session(page.id);
    const attempts = [() => notMine.click('#go'), () => notMine.navigate('https://example.com/'), () => notMine.screenshot(), () => notMine.info()];
    for (const attempt of attempts) {
      const error = await attempt().catch((e: unknown) => e);
      assert.ok(error instanceof BrowserSessionError, String(error));
      assert.ok(!(error instanceof ElementNotFoundError), 'a session that is not found is not an element that is not found');
    }
    assert.equal(await notMine.close(), false, "another user's session reads as already closed");
  });

  test('all sessions open: QuotaExceededError (not retried); closing is true once, then false', async () => {
    const second = await client.browser.createSession();
    const before = browser.calls.filter((c) => c.method === 'createSession').length;
    const refused = await client.browser.createSession().catch((e: unknown) => e);
    assert.ok(refused instanceof QuotaExceededError, String(refused));
    assert.ok(!(refused instanceof RateLimitError));
    assert.equal(browser.calls.filter((c) => c.method === 'createSession').length, before + 1, 'sent once');
    assert.equal(await second.close(), true);
    assert.equal(await second.close(), false);
    assert.equal(await client.browser.closeSession(second.id), false);
    const closed = await second.click('#go').catch((e: unknown) => e);
    assert.ok(closed instanceof BrowserSessionError, String(closed));
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
