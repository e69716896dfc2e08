/**
 * The browser routes as a client meets them. Before any browser runs: every operation is in the served document
 * with its named schemas, refuses a caller without credentials (401, trailing slash or not), and refuses bodies
 * and parameters a browser could not act on with FastAPI's 422, at the field that is wrong; none of these
 * requests reaches the browser service. Then, with a stand-in for the service (helpers/fake-browser.ts): what
 * the routes hand it (the documented defaults filled in), and how its answers and errors reach the client, every
 * one checked against the served document. The browser itself is tested with the service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fakeBrowser, FAKE_PNG_BASE64, type FakeBrowser } from '../helpers/fake-browser.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const SESSION = '00000000-0000-4000-8000-000000000000';
const INTERACTIONS = ['navigate', 'click', 'type', 'fill', 'scroll', 'wait', 'hover', 'keypress', 'screenshot', 'extract', 'content', 'fill-credential'];

/** Every browser operation: method, document path, and the named request and 200 (or 201) response schemas. */
const OPERATIONS: [string, string, string | null, string | null][] = [
  ['post', '/v1/browser/sessions/', 'BrowserSessionCreateRequest', 'BrowserSessionResponse'],
  ['get', '/v1/browser/sessions/', null, 'BrowserSessionListResponse'],
  ['get', '/v1/browser/sessions/{session_id}', null, 'BrowserSessionResponse'],
  ['delete', '/v1/browser/sessions/{session_id}', null, 'BrowserSessionCloseResponse'],
  ['get', '/v1/browser/capabilities', null, 'BrowserCapabilities'],
  ['post', '/v1/browser/interactions/navigate', 'BrowserNavigateRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/interactions/click', 'BrowserClickRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/interactions/type', 'BrowserTypeRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/interactions/fill', 'BrowserFillRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/interactions/scroll', 'BrowserScrollRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/interactions/wait', 'BrowserWaitRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/interactions/hover', 'BrowserTargetRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/interactions/keypress', 'BrowserKeyPressRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/interactions/screenshot', 'BrowserScreenshotRequest', 'BrowserScreenshotResponse'],
  ['post', '/v1/browser/interactions/extract', 'BrowserExtractRequest', 'BrowserExtractResponse'],
  ['post', '/v1/browser/interactions/content', 'BrowserContentRequest', 'BrowserContentResponse'],
  ['post', '/v1/browser/interactions/fill-credential', 'BrowserFillCredentialRequest', 'BrowserInteractionResponse'],
  ['post', '/v1/browser/render', 'BrowserRenderRequest', 'BrowserRenderResponse'],
  ['get', '/v1/browser/usage', null, 'BrowserUsageSummary'],
  ['get', '/v1/browser/usage/history', null, 'BrowserUsageHistory'],
  ['get', '/v1/browser/screenshot/{usage_id}', null, 'BrowserStoredScreenshot'],
  ['post', '/v1/browser/auth/test', 'BrowserAuthTestRequest', 'BrowserAuthTestResponse'],
  ['post', '/v1/browser/credentials', 'BrowserCredentialCreateRequest', 'BrowserCredentialRecord'],
  ['get', '/v1/browser/credentials', null, 'BrowserCredentialList'],
  ['get', '/v1/browser/credentials/{credential_id}', null, 'BrowserCredentialRecord'],
  ['patch', '/v1/browser/credentials/{credential_id}', 'BrowserCredentialUpdateRequest', 'BrowserCredentialRecord'],
  ['delete', '/v1/browser/credentials/{credential_id}', null, null],
];

/** Asserts a 422 in FastAPI's shape and returns its items as [loc, type]. */
function problems(res: { status: number; body: any; text: string }): [(string | number)[], string][] {
  assert.equal(res.status, 422, res.text.slice(0, 300));
  return res.body.detail.map((item: { loc: (string | number)[]; type: string }) => [item.loc, item.type]);
}

describe('browser routes (no browser needed)', () => {
  let server: TestServer;
  let apiKey: string;
  let doc: any;

  before(async () => {
    server = await startTestServer();
    ({ apiKey } = await server.createUserWithKey('browsing'));
    doc = (await call(server, 'GET', '/openapi.json')).body;
  });
  after(() => server.close());

  /** POST as the test user; `key` null sends no header credential. */
  const post = (path: string, json: unknown, key: string | null = apiKey) => call(server, 'POST', path, { ...(key ? { apiKey: key } : {}), json });

  test('the document lists every browser operation, implemented, with its named request and response schemas', () => {
    const problemsFound: string[] = [];
    for (const [method, path, request, response] of OPERATIONS) {
      const operation = doc.paths[path]?.[method];
      if (!operation) {
        problemsFound.push(`${method} ${path}: missing`);
        continue;
      }
      if (/^Not implemented yet/.test(operation.description ?? '')) problemsFound.push(`${method} ${path}: still a placeholder`);
      if (operation.responses['501']) problemsFound.push(`${method} ${path}: declares 501`);
      assert.deepEqual(operation.security, [{ OAuth2PasswordBearer: [] }, { APIKeyHeader: [] }], `${method} ${path}`);
      const body = JSON.stringify(operation.requestBody?.content?.['application/json']?.schema ?? null);
      if (request && !body.includes(`#/components/schemas/${request}"`)) problemsFound.push(`${method} ${path}: body is not ${request}: ${body}`);
      const success = operation.responses['200'] ?? operation.responses['201'];
      const answer = JSON.stringify(success?.content?.['application/json']?.schema ?? null);
      if (response && !answer.includes(`#/components/schemas/${response}"`)) problemsFound.push(`${method} ${path}: answer is not ${response}: ${answer}`);
      for (const name of [request, response]) if (name && !doc.components.schemas[name]) problemsFound.push(`no component ${name}`);
      for (const status of ['401', '422']) if (!operation.responses[status]) problemsFound.push(`${method} ${path}: ${status} not declared`);
    }
    assert.deepEqual(problemsFound, []);
    const listed = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/browser/'));
    assert.equal(listed.length, new Set(OPERATIONS.map(([, path]) => path)).size, `browser paths in the document: ${listed.join(', ')}`);
    assert.equal(doc.paths['/v1/browser/credentials'].post.responses['201'] !== undefined, true);
    assert.equal(doc.paths['/v1/browser/credentials/{credential_id}'].delete.responses['204'] !== undefined, true);
  });

  test('the documented defaults and bounds: viewport 1280×720 within 100..3840 × 100..2160, timeouts in milliseconds up to 120000', () => {
    const create = doc.components.schemas.BrowserSessionCreateRequest.properties;
    assert.deepEqual([create.viewport_width.default, create.viewport_width.minimum, create.viewport_width.maximum], [1280, 100, 3840]);
    assert.deepEqual([create.viewport_height.default, create.viewport_height.minimum, create.viewport_height.maximum], [720, 100, 2160]);
    const navigate = doc.components.schemas.BrowserNavigateRequest.properties;
    assert.deepEqual([navigate.wait_timeout.default, navigate.wait_timeout.maximum], [30000, 120000]);
    assert.match(navigate.wait_timeout.description, /Milliseconds/);
    assert.equal(doc.components.schemas.BrowserTypeRequest.properties.delay.default, 100);
    assert.equal(doc.components.schemas.BrowserContentRequest.properties.max_anchors.default, 50);
    const history = doc.paths['/v1/browser/usage/history'].get.parameters;
    assert.deepEqual(history.map((p: any) => [p.name, p.schema.default]), [['limit', 50], ['offset', 0]]);
  });

  test('no credentials: 401 on every browser operation, before anything else', async () => {
    const wrong: string[] = [];
    for (const [method, path] of OPERATIONS) {
      const url = path.replace('{session_id}', SESSION).replace('{usage_id}', '1').replace('{credential_id}', 'cred_x');
      const res = await call(server, method.toUpperCase(), url, method === 'get' || method === 'delete' ? {} : { json: {} });
      if (res.status !== 401 || res.body?.code !== 'NOT_AUTHENTICATED') wrong.push(`${method} ${url}: ${res.status} ${res.text.slice(0, 120)}`);
    }
    assert.deepEqual(wrong, []);
    for (const path of ['/v1/browser/render', '/v1/browser/sessions/', '/v1/browser/auth/test']) {
      const bad = await post(path, { url: 'https://example.com', api_key: 'sbx_sk_wrong' }, null);
      assert.equal(bad.status, 401, path);
      assert.equal(bad.body.code, 'INVALID_CREDENTIALS', `${path}: the key in the body was checked`);
    }
  });

  test('the sessions collection answers with and without its trailing slash (401 without a key, not 404)', async () => {
    for (const url of ['/v1/browser/sessions', '/v1/browser/sessions/']) {
      for (const method of ['GET', 'POST']) {
        const res = await call(server, method, url, method === 'POST' ? { json: {} } : {});
        assert.equal(res.status, 401, `${method} ${url}: ${res.text}`);
      }
    }
    assert.equal((await call(server, 'GET', '/v1/browser/capabilities/')).status, 401);
    assert.equal((await call(server, 'GET', '/v1/browser/no-such-thing', { apiKey })).status, 404, 'control: an unknown path is 404');
  });

  test('the key in the body authenticates render and session create (their bad bodies are then 422, not 401); not interactions', async () => {
    const render = await post('/v1/browser/render', { api_key: apiKey, width: 50 }, null);
    assert.deepEqual(problems(render).map(([loc]) => loc), [['body', 'width']]);
    const create = await post('/v1/browser/sessions/', { api_key: apiKey, viewport_height: 4000 }, null);
    assert.deepEqual(problems(create).map(([loc]) => loc), [['body', 'viewport_height']]);
    const notHere = await post('/v1/browser/interactions/navigate', { api_key: apiKey, session_id: SESSION, url: 'https://example.com' }, null);
    assert.equal(notHere.status, 401, 'interactions take the key in a header only');
  });

  test('a missing session_id, and a missing or empty body, are 422 on every interaction', async () => {
    for (const action of INTERACTIONS) {
      const missing = problems(await post(`/v1/browser/interactions/${action}`, {}));
      assert.ok(missing.some(([loc, type]) => loc.join('.') === 'body.session_id' && type === 'missing'), `${action}: ${JSON.stringify(missing)}`);
      const none = await call(server, 'POST', `/v1/browser/interactions/${action}`, { apiKey });
      assert.equal(none.status, 422, `${action} without a body: ${none.text}`);
      assert.deepEqual(none.body.detail[0].loc, ['body'], action);
    }
  });

  test('bad fields are 422 at the field: format, selector, text and URL lengths, timeouts, viewport, wait condition', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['screenshot', { format: 'gif' }, 'body.format'],
      ['screenshot', { quality: 101 }, 'body.quality'],
      ['screenshot', { clip: { x: 0, y: 0, width: 0, height: 10 } }, 'body.clip.width'],
      ['click', { selector: 's'.repeat(2001) }, 'body.selector'],
      ['click', { selector: '' }, 'body.selector'],
      ['click', { selector: '#a', timeout: 120_001 }, 'body.timeout'],
      ['click', { selector: '#a', button: 'fourth' }, 'body.button'],
      ['type', { selector: '#a', text: 'x'.repeat(100_001) }, 'body.text'],
      ['type', { selector: '#a', text: 'x', delay: -1 }, 'body.delay'],
      ['fill', { selector: '#a' }, 'body.value'],
      ['navigate', { url: 'https://example.com/' + 'p'.repeat(8192) }, 'body.url'],
      ['navigate', { url: 'https://example.com', wait_timeout: 1.5 }, 'body.wait_timeout'],
      ['navigate', { url: 'https://example.com', wait_until: 'never' }, 'body.wait_until'],
      ['wait', { condition: 'forever' }, 'body.condition'],
      ['keypress', {}, 'body.key'],
      ['extract', { max_elements: 0 }, 'body.max_elements'],
      ['content', { max_anchors: 1001 }, 'body.max_anchors'],
      ['fill-credential', {}, 'body.credential_id'],
    ];
    for (const [action, fields, where] of cases) {
      const found = problems(await post(`/v1/browser/interactions/${action}`, { session_id: SESSION, ...fields }));
      assert.ok(found.some(([loc]) => loc.join('.') === where), `${action} ${JSON.stringify(fields).slice(0, 80)}: ${JSON.stringify(found)}`);
    }
  });

  test('scroll with neither selector nor x/y is 422 at the body; wait for a selector without one is 422 at selector', async () => {
    assert.deepEqual(problems(await post('/v1/browser/interactions/scroll', { session_id: SESSION })), [[['body'], 'value_error']]);
    assert.deepEqual(problems(await post('/v1/browser/interactions/scroll', { session_id: SESSION, selector: null, x: null, y: null })), [[['body'], 'value_error']]);
    for (const condition of ['selector', 'hidden']) {
      assert.deepEqual(problems(await post('/v1/browser/interactions/wait', { session_id: SESSION, condition })), [[['body', 'selector'], 'missing']]);
    }
  });

  test('session create: the viewport bounds, the idle timeout and the user agent', async () => {
    for (const [fields, where] of [
      [{ viewport_width: 99 }, 'body.viewport_width'],
      [{ viewport_width: 3841 }, 'body.viewport_width'],
      [{ viewport_height: 99 }, 'body.viewport_height'],
      [{ viewport_height: 2161 }, 'body.viewport_height'],
      [{ viewport_width: '1280' }, 'body.viewport_width'],
      [{ idle_timeout_seconds: 0 }, 'body.idle_timeout_seconds'],
      [{ user_agent: 'u'.repeat(1025) }, 'body.user_agent'],
    ] as const) {
      const found = problems(await post('/v1/browser/sessions/', fields));
      assert.ok(found.some(([loc]) => loc.join('.') === where), `${JSON.stringify(fields).slice(0, 60)}: ${JSON.stringify(found)}`);
    }
  });

  test('render: exactly one of url and html; bounded viewport and actions', async () => {
    assert.deepEqual(problems(await post('/v1/browser/render', {})), [[['body'], 'value_error']]);
    assert.deepEqual(problems(await post('/v1/browser/render', { url: null, html: null })), [[['body'], 'value_error']]);
    assert.deepEqual(problems(await post('/v1/browser/render', { url: 'https://example.com', html: '<p>x</p>' })), [[['body'], 'value_error']]);
    const actions = problems(await post('/v1/browser/render', { url: 'https://example.com', actions: [{ type: 'teleport' }] }));
    assert.ok(actions.some(([loc]) => loc.join('.') === 'body.actions.0.type'), JSON.stringify(actions));
    const many = problems(await post('/v1/browser/render', { url: 'https://example.com', actions: Array.from({ length: 51 }, () => ({ type: 'wait', condition: 'load' })) }));
    assert.ok(many.some(([loc]) => loc.join('.') === 'body.actions'), JSON.stringify(many));
    const wide = problems(await post('/v1/browser/render', { html: '<p>x</p>', width: 3841 }));
    assert.deepEqual(wide.map(([loc]) => loc), [['body', 'width']]);
  });

  test('a stored screenshot takes an integer usage id; the history a bounded page', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '0x10', '1e309', '2147483648']) {
      const res = await call(server, 'GET', `/v1/browser/screenshot/${id}`, { apiKey });
      assert.deepEqual(problems(res).map(([loc]) => loc), [['path', 'usage_id']], id);
    }
    for (const query of ['limit=0', 'limit=1001', 'limit=x', 'offset=-1']) {
      const res = await call(server, 'GET', `/v1/browser/usage/history?${query}`, { apiKey });
      assert.equal(res.status, 422, query);
    }
  });

  test('credentials: name, username, password and allowed hosts are required and bounded', async () => {
    const create = (fields: Record<string, unknown>) => post('/v1/browser/credentials', { name: 'site', username: 'me', password: 'pw', allowed_hosts: ['example.com'], ...fields });
    for (const [fields, where] of [
      [{ name: undefined }, 'body.name'],
      [{ password: '' }, 'body.password'],
      [{ allowed_hosts: [] }, 'body.allowed_hosts'],
      [{ allowed_hosts: ['https://example.com/'] }, 'body.allowed_hosts.0'],
      [{ allowed_hosts: ['exa mple.com'] }, 'body.allowed_hosts.0'],
    ] as const) {
      const found = problems(await create(fields));
      assert.ok(found.some(([loc]) => loc.join('.') === where), `${JSON.stringify(fields)}: ${JSON.stringify(found)}`);
    }
    const patch = await call(server, 'PATCH', '/v1/browser/credentials/cred_x', { apiKey, json: { allowed_hosts: ['*.*'] } });
    assert.equal(patch.status, 422);
  });
});

describe('browser routes with a stand-in service', () => {
  let server: TestServer;
  let browser: FakeBrowser;
  let alice: string;
  let bob: string;

  before(async () => {
    browser = fakeBrowser({ maxSessions: 2 });
    server = await startTestServer({ browser });
    alice = (await server.createUserWithKey('alice-browser')).apiKey;
    bob = (await server.createUserWithKey('bob-browser')).apiKey;
  });
  after(() => server.close());

  const as = (apiKey: string, method: string, url: string, json?: unknown) => call(server, method, url, { apiKey, ...(json !== undefined ? { json } : {}) });
  const lastCall = (method: string) => [...browser.calls].reverse().find((c) => c.method === method)?.request as Record<string, unknown>;

  test('a session: created with the default viewport (with or without the trailing slash), listed, read, closed with 200 JSON, then 404', async () => {
    const created = await as(alice, 'POST', '/v1/browser/sessions', {});
    assert.equal(created.status, 200, created.text);
    assert.deepEqual([lastCall('createSession').viewport_width, lastCall('createSession').viewport_height], [1280, 720], 'the documented defaults reach the service');
    const id = created.body.session_id as string;
    assert.equal(created.body.status, 'active');
    const listed = await as(alice, 'GET', '/v1/browser/sessions/');
    assert.deepEqual(listed.body.sessions.map((s: { session_id: string }) => s.session_id), [id]);
    assert.equal((await as(alice, 'GET', `/v1/browser/sessions/${id}`)).body.url, 'about:blank');
    assert.equal((await as(bob, 'GET', `/v1/browser/sessions/${id}`)).status, 404, "another user's session is not found");
    const closed = await as(alice, 'DELETE', `/v1/browser/sessions/${id}`);
    assert.equal(closed.status, 200);
    assert.equal(closed.headers.get('content-type')?.split(';')[0], 'application/json');
    assert.deepEqual(closed.body, { success: true, session_id: id, message: `browser session ${id} closed` });
    const again = await as(alice, 'DELETE', `/v1/browser/sessions/${id}`);
    assert.equal(again.status, 404, 'already closed');
    assert.equal(again.body.code, 'NOT_FOUND');
  });

  test('the plan\'s sessions all open: 429 QUOTA_EXCEEDED', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await as(bob, 'POST', '/v1/browser/sessions/', { viewport_width: 1920, viewport_height: 1080 })).body.session_id);
    const refused = await as(bob, 'POST', '/v1/browser/sessions/', {});
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'QUOTA_EXCEEDED');
    for (const id of ids) await as(bob, 'DELETE', `/v1/browser/sessions/${id}`);
  });

  test('interactions reach the service with their documented defaults, and answer their shapes', async () => {
    const id = (await as(alice, 'POST', '/v1/browser/sessions/', {})).body.session_id as string;
    const navigated = await as(alice, 'POST', '/v1/browser/interactions/navigate', { session_id: id, url: 'https://example.com/' });
    assert.equal(navigated.status, 200, navigated.text);
    assert.deepEqual(navigated.body.data, { url: 'https://example.com/', title: 'Fake page' });
    assert.equal(lastCall('navigate').wait_timeout, 30_000);
    assert.equal(lastCall('navigate').wait_until, 'load');
    await as(alice, 'POST', '/v1/browser/interactions/type', { session_id: id, selector: '#q', text: 'otters' });
    assert.deepEqual([lastCall('type').delay, lastCall('type').timeout], [100, 30_000]);
    await as(alice, 'POST', '/v1/browser/interactions/click', { session_id: id, selector: '#go' });
    assert.deepEqual([lastCall('click').force, lastCall('click').button, lastCall('click').click_count], [false, 'left', 1]);
    const scrolled = await as(alice, 'POST', '/v1/browser/interactions/scroll', { session_id: id, y: 400 });
    assert.deepEqual(scrolled.body.data, { x: 0, y: 400 });
    const shot = await as(alice, 'POST', '/v1/browser/interactions/screenshot', { session_id: id });
    assert.equal(lastCall('screenshot').format, 'png');
    assert.equal(shot.body.screenshot, FAKE_PNG_BASE64);
    assert.equal(shot.body.usage_info.screenshots_taken, 1);
    const extracted = await as(alice, 'POST', '/v1/browser/interactions/extract', { session_id: id, selector: 'h1', attributes: ['id', 'class'] });
    assert.deepEqual(extracted.body.elements[0].attributes, { id: 'title', class: null });
    assert.equal(lastCall('extract').max_elements, 100);
    const content = await as(alice, 'POST', '/v1/browser/interactions/content', { session_id: id });
    assert.equal(lastCall('content').max_anchors, 50);
    assert.equal(content.body.readable_content.title, 'Fake page');
    for (const [action, body] of [['fill', { selector: '#q', value: 'v' }], ['wait', { condition: 'networkidle' }], ['hover', { selector: '#q' }], ['keypress', { key: 'Enter' }]] as const) {
      const res = await as(alice, 'POST', `/v1/browser/interactions/${action}`, { session_id: id, ...body });
      assert.equal(res.status, 200, `${action}: ${res.text}`);
      assert.equal(res.body.success, true);
    }
    assert.equal((await as(bob, 'POST', '/v1/browser/interactions/click', { session_id: id, selector: '#go' })).status, 404, "another user's session");
    await as(alice, 'DELETE', `/v1/browser/sessions/${id}`);
  });

  test('errors reach the client with their codes: ELEMENT_NOT_FOUND carries the selector, BROWSER_TIMEOUT, NAVIGATION_FAILED', async () => {
    const id = (await as(alice, 'POST', '/v1/browser/sessions/', {})).body.session_id as string;
    const missing = await as(alice, 'POST', '/v1/browser/interactions/click', { session_id: id, selector: '#missing' });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { selector: '#missing', detail: 'no element matches #missing', code: 'ELEMENT_NOT_FOUND' });
    const slow = await as(alice, 'POST', '/v1/browser/interactions/fill', { session_id: id, selector: '#slow', value: 'x' });
    assert.deepEqual([slow.status, slow.body.code], [408, 'BROWSER_TIMEOUT']);
    const unreachable = await as(alice, 'POST', '/v1/browser/interactions/navigate', { session_id: id, url: 'https://unreachable.invalid/' });
    assert.deepEqual([unreachable.status, unreachable.body.code], [400, 'NAVIGATION_FAILED']);
    const gone = await as(alice, 'POST', '/v1/browser/interactions/navigate', { session_id: '11111111-1111-4111-8111-111111111111', url: 'https://example.com/' });
    assert.deepEqual([gone.status, gone.body.code], [404, 'NOT_FOUND']);
    await as(alice, 'DELETE', `/v1/browser/sessions/${id}`);
  });

  test('render with the key in the body; its stored screenshot is the owner\'s only; usage and its history page', async () => {
    const rendered = await call(server, 'POST', '/v1/browser/render', { json: { api_key: alice, url: 'https://example.com/', return_html: true } });
    assert.equal(rendered.status, 200, rendered.text);
    assert.equal(rendered.body.screenshot, FAKE_PNG_BASE64);
    assert.equal(typeof rendered.body.html, 'string');
    const sent = lastCall('render');
    assert.deepEqual([sent.width, sent.height, sent.wait_timeout, sent.format, sent.return_screenshot, sent.full_page], [1280, 720, 30_000, 'png', true, false]);
    const stored = await as(alice, 'GET', `/v1/browser/screenshot/${rendered.body.usage_id}`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.screenshot, FAKE_PNG_BASE64);
    assert.equal((await as(bob, 'GET', `/v1/browser/screenshot/${rendered.body.usage_id}`)).status, 404);
    const history = await as(alice, 'GET', '/v1/browser/usage/history');
    assert.deepEqual(lastCall('usageHistory'), { limit: 50, offset: 0 });
    assert.equal(history.body.items[0].usage_id, rendered.body.usage_id);
    assert.equal((await as(alice, 'GET', '/v1/browser/usage')).body.renders, 1);
    const caps = await as(alice, 'GET', '/v1/browser/capabilities');
    assert.equal(caps.body.engine, 'chromium');
  });

  test('auth test: the key in a header or in the body', async () => {
    const viaHeader = await as(alice, 'POST', '/v1/browser/auth/test', {});
    assert.equal(viaHeader.status, 200, viaHeader.text);
    assert.equal(viaHeader.body.username, 'alice-browser');
    const viaBody = await call(server, 'POST', '/v1/browser/auth/test', { json: { api_key: bob } });
    assert.equal(viaBody.body.username, 'bob-browser');
  });

  test('credentials: 201 without the password, list, update, 409 on a second of a name, 204 on delete, another user\'s is 404', async () => {
    const created = await as(alice, 'POST', '/v1/browser/credentials', { name: 'shop', username: 'alice@example.com', password: 'hunter2-secret', allowed_hosts: ['shop.example.com', '*.example.org'] });
    assert.equal(created.status, 201, created.text);
    assert.ok(!created.text.includes('hunter2-secret'), 'the password is never answered');
    const id = created.body.credential_id as string;
    assert.equal((await as(alice, 'POST', '/v1/browser/credentials', { name: 'shop', username: 'x', password: 'y', allowed_hosts: ['a.example'] })).status, 409);
    const listed = await as(alice, 'GET', '/v1/browser/credentials');
    assert.deepEqual(listed.body.credentials.map((c: { name: string }) => c.name), ['shop']);
    assert.ok(!listed.text.includes('hunter2-secret'));
    const updated = await as(alice, 'PATCH', `/v1/browser/credentials/${id}`, { allowed_hosts: ['shop.example.com'] });
    assert.deepEqual(updated.body.allowed_hosts, ['shop.example.com']);
    assert.equal((await as(bob, 'GET', `/v1/browser/credentials/${id}`)).status, 404);
    assert.equal((await as(bob, 'DELETE', `/v1/browser/credentials/${id}`)).status, 404);
    const session = (await as(alice, 'POST', '/v1/browser/sessions/', {})).body.session_id as string;
    const filled = await as(alice, 'POST', '/v1/browser/interactions/fill-credential', { session_id: session, credential_id: id });
    assert.equal(filled.status, 200, filled.text);
    assert.equal(lastCall('fillCredential').submit, false);
    await as(alice, 'DELETE', `/v1/browser/sessions/${session}`);
    const deleted = await as(alice, 'DELETE', `/v1/browser/credentials/${id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assert.equal((await as(alice, 'GET', `/v1/browser/credentials/${id}`)).status, 404);
  });
});
