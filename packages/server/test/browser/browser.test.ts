// test-order: last (Chromium in a VM keeps both cores busy: scripts/run-tests.mjs runs it after the light lane is done)
/**
 * Browser automation against real Chromium in real VMs (issue 17), on pages a server in a network namespace of
 * this test serves (forms, links, a delayed element, a page that never answers): every interaction changes the
 * page as it should (read back with extract and content); screenshots decode as PNG and JPEG of the requested
 * size; a missing element, a timeout and a failed navigation give their codes; one user's session is 404 to
 * another; a deleted session's VM is gone; a render works without a session and its screenshot is kept.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { startNetnsWebServer, type NetnsWebServer } from '../helpers/netns-web.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { findBrowserSession } from '../../src/store/browser-store.ts';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';
import type { SandboxEngine } from '../../src/engine/sandbox-engine.ts';
import { ARTICLE_PAGE, ARTICLE_TEXT, PARAGRAPHS, SUBHEADING } from './article-fixture.ts';

const LOGIN_PASSWORD = 'correct horse battery staple';

describe('browser automation on real VMs', { timeout: 40 * 60_000 }, () => {
  let web: NetnsWebServer;
  let server: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let sessionId: string;

  before(async () => {
    web = await startNetnsWebServer();
    server = await startTestServer({
      config: {
        browserPoolSize: 1,
        plans: { ...DEFAULT_PLANS, nobrowser: { ...DEFAULT_PLANS.free!, maxBrowserSessions: 0 } },
      },
    });
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
  });
  after(async () => {
    await server?.close();
    await web?.stop();
  });

  const post = (who: { apiKey: string }, url: string, json: unknown) => call(server, 'POST', url, { apiKey: who.apiKey, json });
  const interact = async (name: string, body: Record<string, unknown>, who = alice) => {
    const answer = await post(who, `/v1/browser/interactions/${name}`, { session_id: sessionId, ...body });
    assert.equal(answer.status, 200, `${name}: ${answer.text}`);
    return answer.body;
  };
  const textOf = async (selector: string): Promise<string> => {
    const { elements } = await interact('extract', { selector });
    assert.equal(elements.length, 1, `${selector}: ${JSON.stringify(elements)}`);
    return elements[0].text;
  };
  const valueOf = async (selector: string): Promise<string | null> => (await interact('extract', { selector })).elements[0].value;

  // One render checks the inline-HTML path with its options (a render is a VM of its own, ~15 s under TCG); the
  // next one starts from a URL with actions; the SDK's and CLI's tests render a URL to a PNG of the viewport.
  test('render works without a session: inline HTML as a JPEG clip after a selector wait, with its HTML and text; the screenshot is kept', async () => {
    const answer = await post(alice, '/v1/browser/render', {
      html: '<title>inline</title><body style="margin:0;background:#c00"><h1 id="x">Inline</h1><p>Some text</p></body>',
      format: 'jpeg',
      quality: 60,
      clip: { x: 0, y: 0, width: 320, height: 200 },
      wait_for_selector: '#x',
      return_html: true,
      return_text: true,
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.title, 'inline');
    assert.match(answer.body.html, /<h1 id="x">Inline<\/h1>/);
    assert.match(answer.body.text, /Inline\s+Some text/);
    const image = jpeg.decode(Buffer.from(answer.body.screenshot, 'base64'));
    assert.deepEqual([image.width, image.height], [320, 200]);
    // A red page: the middle pixel of the clip is red.
    const at = (image.height / 2) * image.width * 4 + (image.width / 2) * 4;
    assert.ok(image.data[at]! > 150 && image.data[at + 1]! < 80, `expected red, got ${[...image.data.subarray(at, at + 3)]}`);

    const stored = await call(server, 'GET', `/v1/browser/screenshot/${answer.body.usage_id}`, { apiKey: alice.apiKey });
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.body.screenshot, answer.body.screenshot, 'the stored screenshot is the one answered');
    assert.equal(stored.body.content_type, 'image/jpeg');
    assert.equal((await call(server, 'GET', `/v1/browser/screenshot/${answer.body.usage_id}`, { apiKey: bob.apiKey })).status, 404);

    const neither = await post(alice, '/v1/browser/render', { width: 800 });
    assert.equal(neither.status, 422, neither.text);
    const badScheme = await post(alice, '/v1/browser/render', { url: 'file:///etc/passwd' });
    assert.equal(badScheme.status, 422, badScheme.text);
  });

  test('render runs its actions through the route, navigate included: the page they leave is the one answered', async () => {
    const answer = await post(alice, '/v1/browser/render', {
      url: `${web.baseUrl}/page/1`,
      wait_timeout: 60_000,
      return_text: true,
      return_screenshot: false,
      actions: [
        { type: 'navigate', url: `${web.baseUrl}/form`, wait_timeout: 60_000 },
        { type: 'fill', selector: '#name', value: 'Ada Lovelace' },
        { type: 'type', selector: '#email', text: 'ada@example.com' },
        { type: 'click', selector: '#counter-btn' },
        { type: 'click', selector: '#counter-btn' },
        { type: 'keypress', key: 'Tab' },
        { type: 'click', selector: '#submit' },
      ],
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.title, 'Form');
    assert.equal(answer.body.url, `${web.baseUrl}/form`);
    assert.equal(answer.body.status_code, 200, "the status is the first page's");
    assert.equal(answer.body.screenshot, null);
    assert.match(answer.body.text, /Count 2/);
    assert.match(answer.body.text, /Last key: Tab/);
    assert.match(answer.body.text, /"name":"Ada Lovelace","email":"ada@example.com"/);
    const paths = (await web.requests()).map((r) => r.path);
    assert.ok(paths.lastIndexOf('/form') > paths.lastIndexOf('/page/1'), `the browser loaded /page/1, then /form: ${paths.slice(-5).join(', ')}`);

    const usage = await call(server, 'GET', '/v1/browser/usage/history?limit=1', { apiKey: alice.apiKey });
    assert.equal(usage.body.items[0].usage_id, answer.body.usage_id);
    assert.ok(usage.body.items[0].pages >= 2, `both navigations are counted: ${JSON.stringify(usage.body.items[0])}`);

    const badScheme = await post(alice, '/v1/browser/render', { url: `${web.baseUrl}/page/1`, actions: [{ type: 'navigate', url: 'file:///etc/passwd' }] });
    assert.equal(badScheme.status, 422, badScheme.text);
    assert.deepEqual(
      badScheme.body.detail.map((d: { loc: unknown }) => d.loc),
      [['body', 'actions', 0, 'url']],
    );
  });

  test('a plan without browser sessions gets 429 QUOTA_EXCEEDED and no VM', async () => {
    const carol = await server.createUserWithKey('carol', 'nobrowser');
    const answer = await post(carol, '/v1/browser/sessions/', {});
    assert.equal(answer.status, 429, answer.text);
    assert.equal(answer.body.code, 'QUOTA_EXCEEDED');
  });

  test('a session: from the warm pool, created with its viewport, listed, 404 to another user', async () => {
    // The pool (size 1) began filling at the first render; its VM must be the one handed out.
    const deadline = Date.now() + 10 * 60_000;
    while ((await server.services.sandbox.browserService.pooledVms()) < 1) {
      assert.ok(Date.now() < deadline, 'the browser pool filled within 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const acquisitions: { vmId: string; fromPool: boolean }[] = [];
    (server.services.sandbox.engine as SandboxEngine).events.on('acquired', (event) => acquisitions.push(event));
    const created = await post(alice, '/v1/browser/sessions/', { viewport_width: 1024, viewport_height: 768, user_agent: 'sandboxd-test-agent/1.0' });
    assert.equal(created.status, 200, created.text);
    sessionId = created.body.session_id;
    const row = await findBrowserSession(server.services.database.db, sessionId);
    assert.deepEqual(
      acquisitions.filter((a) => a.vmId === row?.vm_id).map((a) => a.fromPool),
      [true],
      'the session VM came from the pool',
    );
    assert.equal(created.body.status, 'active');
    assert.deepEqual([created.body.viewport_width, created.body.viewport_height], [1024, 768]);
    assert.ok(Date.parse(created.body.expires_at) > Date.now());

    const listed = await call(server, 'GET', '/v1/browser/sessions/', { apiKey: alice.apiKey });
    assert.ok(listed.body.sessions.some((s: { session_id: string }) => s.session_id === sessionId));
    assert.equal((await call(server, 'GET', '/v1/browser/sessions/', { apiKey: bob.apiKey })).body.sessions.length, 0);
    assert.equal((await call(server, 'GET', `/v1/browser/sessions/${sessionId}`, { apiKey: bob.apiKey })).status, 404);
    const foreign = await post(bob, '/v1/browser/interactions/navigate', { session_id: sessionId, url: `${web.baseUrl}/form` });
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal((await call(server, 'DELETE', `/v1/browser/sessions/${sessionId}`, { apiKey: bob.apiKey })).status, 404);
  });

  test('navigate, fill, type, click, keypress on a form: the page changes as it should', async () => {
    const navigated = await interact('navigate', { url: `${web.baseUrl}/form`, wait_timeout: 60_000 });
    assert.equal(navigated.success, true);
    assert.equal(navigated.data.title, 'Form');
    const seen = (await web.requests()).filter((r) => r.path === '/form');
    assert.equal(seen.at(-1)?.userAgent, 'sandboxd-test-agent/1.0', 'the session user agent is sent');

    await interact('fill', { selector: '#name', value: 'Ada Lovelace' });
    assert.equal(await valueOf('#name'), 'Ada Lovelace');
    await interact('type', { selector: '#email', text: 'ada@example.com', delay: 10 });
    assert.equal(await valueOf('#email'), 'ada@example.com');
    await interact('fill', { selector: '#bio', value: 'first programmer' });
    await interact('click', { selector: '#counter-btn' });
    await interact('click', { selector: '#counter-btn' });
    assert.equal(await textOf('#count'), '2');
    await interact('keypress', { key: 'Tab' });
    assert.equal(await textOf('#last-key'), 'Tab');
    await interact('click', { selector: '#submit' });
    const result = JSON.parse(await textOf('#result'));
    assert.deepEqual({ name: result.name, email: result.email, bio: result.bio }, { name: 'Ada Lovelace', email: 'ada@example.com', bio: 'first programmer' });

    const extracted = await interact('extract', { selector: 'input', attributes: ['id', 'type'] });
    assert.deepEqual(
      extracted.elements.map((e: { attributes: Record<string, string> }) => e.attributes.id),
      ['name', 'email', 'password', 'agree'],
    );
  });

  test('links, hover, scroll, content and waits', async () => {
    await interact('navigate', { url: `${web.baseUrl}/links` });
    await interact('hover', { selector: '#hover-target' });
    assert.equal(await textOf('#hover-target'), 'Hovered');

    const scrolled = await interact('scroll', { y: 3000 });
    assert.equal(scrolled.data.y, 3000);
    const intoView = await interact('scroll', { selector: '#bottom' });
    assert.ok(intoView.data.y > 3000, `scrolled to the bottom: ${JSON.stringify(intoView.data)}`);

    // The answer the published InstaVM client reads (its README's "Response Structure"); a list of links is no
    // article, so its readable content is its visible text.
    const content = await interact('content', { include_interactive: true, include_anchors: true, max_anchors: 3 });
    assert.deepEqual([content.success, content.title, content.url], [true, 'Links', `${web.baseUrl}/links`]);
    assert.ok(content.extraction_time > 0 && content.extraction_time <= content.execution_time, JSON.stringify(content.extraction_time));
    const readable = content.readable_content;
    assert.match(readable.content, /Go to page 4/);
    assert.deepEqual(
      [readable.extractor, readable.title, readable.byline, readable.word_count, readable.length],
      ['page_text', 'Links', null, readable.content.split(/\s+/).length, readable.content.length],
    );
    assert.deepEqual(
      content.content_anchors.map((a: { tag: string; text: string; href: string | null; length: number }) => [a.tag, a.text, a.href, a.length]),
      [
        ['h1', 'Links', null, 5],
        ['a', 'Go to page 1', `${web.baseUrl}/page/1`, 12],
        ['a', 'Go to page 2', `${web.baseUrl}/page/2`, 12],
      ],
    );
    const link5 = content.interactive_elements.find((e: { selector: string }) => e.selector === '#link-5');
    assert.deepEqual([link5?.type, link5?.interactive_type, link5?.tag, link5?.attributes.href], ['link', 'link', 'a', '/page/5']);
    assert.ok(link5.position.width > 0 && link5.position.height > 0 && link5.position.y > 0, JSON.stringify(link5.position));

    await interact('click', { selector: content.content_anchors[2].selector });
    await interact('wait', { condition: 'load', timeout: 30_000 });
    assert.equal(await textOf('h1'), 'Page 2');

    // An article page reads as its article alone (Readability in the VM's Chromium).
    await interact('navigate', { url: `data:text/html;charset=utf-8,${encodeURIComponent(ARTICLE_PAGE)}` });
    const article = await interact('content', { include_interactive: false, max_anchors: 2 });
    assert.deepEqual(
      [article.readable_content.extractor, article.readable_content.byline, article.readable_content.content, article.readable_content.word_count],
      ['readability', 'By Ada Lovelace', ARTICLE_TEXT, ARTICLE_TEXT.split(/\s+/).length],
    );
    assert.deepEqual(
      article.content_anchors.map((a: { tag: string; length: number }) => [a.tag, a.length]),
      [
        ['p', PARAGRAPHS[0].length],
        ['h2', SUBHEADING.length],
      ],
    );
    assert.deepEqual(article.interactive_elements, []);

    await interact('navigate', { url: `${web.baseUrl}/delayed?ms=1500` });
    await interact('wait', { condition: 'selector', selector: '#late', timeout: 30_000 });
    assert.equal(await textOf('#late'), 'Here at last');
    // Playwright's element states, as the published InstaVM client sends them (`wait_for("visible", "body")`).
    await interact('wait', { condition: 'visible', selector: 'body', timeout: 30_000 });
    await interact('wait', { condition: 'attached', selector: '#late', timeout: 30_000 });
    await interact('wait', { condition: 'detached', selector: '#never-there', timeout: 30_000 });
  });

  test('screenshots decode as PNG and JPEG of the viewport, the full page and a clip', async () => {
    await interact('navigate', { url: `${web.baseUrl}/links` });
    const shot = await interact('screenshot', {});
    const png = PNG.sync.read(Buffer.from(shot.screenshot, 'base64'));
    assert.deepEqual([png.width, png.height, shot.width, shot.height], [1024, 768, 1024, 768]);
    assert.equal(shot.format, 'png');
    assert.ok(shot.usage_info.screenshots_taken >= 1);

    const jpg = await interact('screenshot', { format: 'jpeg', quality: 40 });
    const decoded = jpeg.decode(Buffer.from(jpg.screenshot, 'base64'));
    assert.deepEqual([decoded.width, decoded.height], [1024, 768]);

    const full = await interact('screenshot', { full_page: true });
    assert.equal(PNG.sync.read(Buffer.from(full.screenshot, 'base64')).height > 5000, true, 'the full page is taller than 5000 px');
    const clip = await interact('screenshot', { clip: { x: 10, y: 10, width: 200, height: 100 } });
    assert.deepEqual([clip.width, clip.height], [200, 100]);
  });

  test('element not found, timeout, failed navigation and bad input give their codes', async () => {
    // The page every check below runs on: given time to load on a busy host (its default timeout once ran out).
    await interact('navigate', { url: `${web.baseUrl}/form`, wait_timeout: 60_000 });
    const missing = await post(alice, '/v1/browser/interactions/click', { session_id: sessionId, selector: '#no-such-button', timeout: 1500 });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.code, 'ELEMENT_NOT_FOUND');
    assert.equal(missing.body.selector, '#no-such-button');

    const never = await post(alice, '/v1/browser/interactions/navigate', { session_id: sessionId, url: `${web.baseUrl}/never`, wait_timeout: 4000 });
    assert.equal(never.status, 408, never.text);
    assert.equal(never.body.code, 'BROWSER_TIMEOUT');

    const waited = await post(alice, '/v1/browser/interactions/wait', {
      session_id: sessionId,
      condition: 'selector',
      selector: '#never-appears',
      timeout: 1500,
    });
    assert.equal(waited.status, 408, waited.text);

    const refused = await post(alice, '/v1/browser/interactions/navigate', { session_id: sessionId, url: `http://${web.serverAddress}:81/` });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.code, 'NAVIGATION_FAILED');

    const badSelector = await post(alice, '/v1/browser/interactions/click', { session_id: sessionId, selector: 'button[[', timeout: 1000 });
    assert.equal(badSelector.status, 400, badSelector.text);
    const noTarget = await post(alice, '/v1/browser/interactions/scroll', { session_id: sessionId });
    assert.equal(noTarget.status, 422, noTarget.text);

    // The session is still usable after its errors. A minute: on a loaded two-core host this navigation, the first
    // after one that timed out, once used up the default 30 s (the driver retries once when the leftover page cuts it short).
    await interact('navigate', { url: `${web.baseUrl}/page/5`, wait_timeout: 60_000 });
    assert.equal(await textOf('h1'), 'Page 5');
  });

  test('fill-credential types a stored secret only on its hosts, and the secret is never shown', async () => {
    const created = await post(alice, '/v1/browser/credentials', {
      name: 'fixture-login',
      username: 'ada',
      password: LOGIN_PASSWORD,
      allowed_hosts: [web.serverAddress],
    });
    assert.equal(created.status, 201, created.text);
    assert.ok(!created.text.includes(LOGIN_PASSWORD));
    const credentialId = created.body.credential_id;
    const listed = await call(server, 'GET', '/v1/browser/credentials', { apiKey: alice.apiKey });
    assert.ok(!listed.text.includes(LOGIN_PASSWORD));
    assert.equal((await call(server, 'GET', `/v1/browser/credentials/${credentialId}`, { apiKey: bob.apiKey })).status, 404);

    await interact('navigate', { url: `${web.baseUrl}/login?password=${encodeURIComponent(LOGIN_PASSWORD)}` });
    const filled = await interact('fill-credential', {
      credential_id: credentialId,
      username_selector: '#username',
      password_selector: '#password',
      submit: true,
    });
    assert.ok(!JSON.stringify(filled).includes(LOGIN_PASSWORD));
    assert.equal(await textOf('#welcome'), 'Welcome ada');

    const elsewhere = await post(alice, '/v1/browser/credentials', { name: 'elsewhere', username: 'x', password: 'y', allowed_hosts: ['example.com'] });
    const refused = await post(alice, '/v1/browser/interactions/fill-credential', { session_id: sessionId, credential_id: elsewhere.body.credential_id });
    assert.equal(refused.status, 403, refused.text);
  });

  test('usage counts renders and sessions; history pages', async () => {
    const usage = await call(server, 'GET', '/v1/browser/usage', { apiKey: alice.apiKey });
    assert.equal(usage.status, 200, usage.text);
    assert.ok(usage.body.renders >= 2, JSON.stringify(usage.body));
    assert.ok(usage.body.sessions >= 1, JSON.stringify(usage.body));
    assert.ok(usage.body.pages >= 5, JSON.stringify(usage.body));
    // The inline render's and the session's four (PNG, JPEG, full page, clip).
    assert.ok(usage.body.screenshots >= 5, JSON.stringify(usage.body));
    assert.equal(usage.body.active_sessions, 1);
    const history = await call(server, 'GET', '/v1/browser/usage/history?limit=2', { apiKey: alice.apiKey });
    assert.equal(history.status, 200, history.text);
    assert.equal(history.body.items.length, 2);
    assert.ok(history.body.total >= 3);
    assert.equal((await call(server, 'GET', '/v1/browser/usage', { apiKey: bob.apiKey })).body.renders, 0);
  });

  test('a deleted session answers 200, its VM is gone, and it is 404 afterwards', async () => {
    const row = await findBrowserSession(server.services.database.db, sessionId);
    assert.ok(row && server.services.sandbox.engine.liveVmIds().includes(row.vm_id), 'the session VM runs');
    const closed = await call(server, 'DELETE', `/v1/browser/sessions/${sessionId}`, { apiKey: alice.apiKey });
    assert.equal(closed.status, 200, closed.text);
    assert.equal(server.services.sandbox.engine.liveVmIds().includes(row.vm_id), false, 'the session VM is gone');
    const after = await call(server, 'GET', `/v1/browser/sessions/${sessionId}`, { apiKey: alice.apiKey });
    assert.equal(after.body.status, 'closed');
    assert.equal(after.body.end_reason, 'closed');
    assert.equal((await call(server, 'DELETE', `/v1/browser/sessions/${sessionId}`, { apiKey: alice.apiKey })).status, 404);
    const gone = await post(alice, '/v1/browser/interactions/navigate', { session_id: sessionId, url: `${web.baseUrl}/form` });
    assert.equal(gone.status, 404, gone.text);
  });

  test('an idle session is closed after its idle timeout', async () => {
    const created = await post(alice, '/v1/browser/sessions/', { idle_timeout_seconds: 10 });
    assert.equal(created.status, 200, created.text);
    const row = await findBrowserSession(server.services.database.db, created.body.session_id);
    const deadline = Date.now() + 60_000;
    let status = 'active';
    while (status === 'active' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      status = (await call(server, 'GET', `/v1/browser/sessions/${created.body.session_id}`, { apiKey: alice.apiKey })).body.status;
    }
    assert.equal(status, 'expired');
    assert.equal(server.services.sandbox.engine.liveVmIds().includes(row!.vm_id), false);
  });
});
