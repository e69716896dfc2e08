/**
 * The browser routes as a client meets them, on the real server and its real browser service, with no VM: every
 * operation is in the served document with its named schemas, refuses a caller without credentials (401,
 * trailing slash or not), and refuses bodies and parameters a browser could not act on with FastAPI's 422, at the
 * field that is wrong; none of these requests reaches the service. Then what the service answers without
 * starting a browser: a plan with no browser sessions gets 429 on session create and render (and no VM starts),
 * sessions, usage records and credentials that are not the caller's are 404 on every operation, usage and its
 * history, capabilities and the auth test, and stored credentials (never the password back), every answer
 * checked against the served document. What a real browser does (interactions, their errors, renders, usage
 * after them, fill-credential) is tested on real VMs in browser.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';
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
    assert.deepEqual(
      history.map((p: any) => [p.name, p.schema.default]),
      [
        ['limit', 50],
        ['offset', 0],
      ],
    );
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
    assert.deepEqual(
      problems(render).map(([loc]) => loc),
      [['body', 'width']],
    );
    const create = await post('/v1/browser/sessions/', { api_key: apiKey, viewport_height: 4000 }, null);
    assert.deepEqual(
      problems(create).map(([loc]) => loc),
      [['body', 'viewport_height']],
    );
    const notHere = await post('/v1/browser/interactions/navigate', { api_key: apiKey, session_id: SESSION, url: 'https://example.com' }, null);
    assert.equal(notHere.status, 401, 'interactions take the key in a header only');
  });

  test('a missing session_id, and a missing or empty body, are 422 on every interaction', async () => {
    for (const action of INTERACTIONS) {
      const missing = problems(await post(`/v1/browser/interactions/${action}`, {}));
      assert.ok(
        missing.some(([loc, type]) => loc.join('.') === 'body.session_id' && type === 'missing'),
        `${action}: ${JSON.stringify(missing)}`,
      );
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
      assert.ok(
        found.some(([loc]) => loc.join('.') === where),
        `${action} ${JSON.stringify(fields).slice(0, 80)}: ${JSON.stringify(found)}`,
      );
    }
  });

  test('scroll with neither selector nor x/y is 422 at the body; wait for a selector without one is 422 at selector', async () => {
    assert.deepEqual(problems(await post('/v1/browser/interactions/scroll', { session_id: SESSION })), [[['body'], 'value_error']]);
    assert.deepEqual(problems(await post('/v1/browser/interactions/scroll', { session_id: SESSION, selector: null, x: null, y: null })), [
      [['body'], 'value_error'],
    ]);
    for (const condition of ['selector', 'visible', 'hidden', 'attached', 'detached']) {
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
      assert.ok(
        found.some(([loc]) => loc.join('.') === where),
        `${JSON.stringify(fields).slice(0, 60)}: ${JSON.stringify(found)}`,
      );
    }
  });

  test('render: exactly one of url and html; bounded viewport and actions', async () => {
    assert.deepEqual(problems(await post('/v1/browser/render', {})), [[['body'], 'value_error']]);
    assert.deepEqual(problems(await post('/v1/browser/render', { url: null, html: null })), [[['body'], 'value_error']]);
    assert.deepEqual(problems(await post('/v1/browser/render', { url: 'https://example.com', html: '<p>x</p>' })), [[['body'], 'value_error']]);
    const actions = problems(await post('/v1/browser/render', { url: 'https://example.com', actions: [{ type: 'teleport' }] }));
    assert.ok(
      actions.some(([loc]) => loc.join('.') === 'body.actions.0.type'),
      JSON.stringify(actions),
    );
    const many = problems(
      await post('/v1/browser/render', { url: 'https://example.com', actions: Array.from({ length: 51 }, () => ({ type: 'wait', condition: 'load' })) }),
    );
    assert.ok(
      many.some(([loc]) => loc.join('.') === 'body.actions'),
      JSON.stringify(many),
    );
    const wide = problems(await post('/v1/browser/render', { html: '<p>x</p>', width: 3841 }));
    assert.deepEqual(
      wide.map(([loc]) => loc),
      [['body', 'width']],
    );
  });

  test('render actions are a union tagged by type: each type with its own fields and rules, navigate included, at the action that is wrong', async () => {
    const render = (actions: unknown[]) => post('/v1/browser/render', { url: 'https://example.com', actions });
    assert.deepEqual(problems(await render([{ type: 'teleport' }])), [[['body', 'actions', 0, 'type'], 'union_tag_invalid']]);
    assert.deepEqual(problems(await render([{ selector: '#a' }])), [[['body', 'actions', 0, 'type'], 'union_tag_not_found']]);
    for (const [action, where, type] of [
      [{ type: 'navigate' }, 'body.actions.1.url', 'missing'],
      [{ type: 'navigate', url: '' }, 'body.actions.1.url', 'string_too_short'],
      [{ type: 'navigate', url: 'https://example.com/', wait_until: 'never' }, 'body.actions.1.wait_until', 'enum'],
      [{ type: 'click' }, 'body.actions.1.selector', 'missing'],
      [{ type: 'click', selector: '#a', click_count: 4 }, 'body.actions.1.click_count', 'less_than_equal'],
      [{ type: 'fill', selector: '#a' }, 'body.actions.1.value', 'missing'],
      [{ type: 'type', selector: '#a', text: 'x', delay: 1001 }, 'body.actions.1.delay', 'less_than_equal'],
      [{ type: 'wait', condition: 'soon' }, 'body.actions.1.condition', 'enum'],
      [{ type: 'wait', condition: 'selector' }, 'body.actions.1.selector', 'missing'],
      [{ type: 'scroll' }, 'body.actions.1', 'value_error'],
      [{ type: 'hover', selector: '#a', timeout: 120_001 }, 'body.actions.1.timeout', 'less_than_equal'],
      [{ type: 'keypress' }, 'body.actions.1.key', 'missing'],
    ] as const) {
      const found = problems(await render([{ type: 'wait', condition: 'load' }, action]));
      assert.deepEqual(
        found.map(([loc, t]) => [loc.join('.'), t]),
        [[where, type]],
        JSON.stringify(action),
      );
    }
    const member = (name: string) => doc.components.schemas[name];
    const union = member('BrowserRenderAction');
    // The mapping is stated (generators read the tag's values from it, not from the members' names).
    assert.deepEqual(union.discriminator, {
      propertyName: 'type',
      mapping: Object.fromEntries(
        ['click', 'fill', 'hover', 'keypress', 'navigate', 'scroll', 'type', 'wait'].map((tag) => [
          tag,
          `#/components/schemas/BrowserRender${tag === 'keypress' ? 'KeyPress' : tag.charAt(0).toUpperCase() + tag.slice(1)}Action`,
        ]),
      ),
    });
    const members = union.oneOf.map((ref: { $ref: string }) => member(ref.$ref.split('/').pop()!));
    // The tag of each member: one value (a `const`, which the document states as a one-value `enum`).
    const tagOf = (m: any): string => m.properties.type.const ?? m.properties.type.enum?.[0];
    assert.deepEqual(members.map(tagOf).sort(), ['click', 'fill', 'hover', 'keypress', 'navigate', 'scroll', 'type', 'wait']);
    const requestOf: Record<string, string> = {
      navigate: 'BrowserNavigateRequest',
      click: 'BrowserClickRequest',
      type: 'BrowserTypeRequest',
      fill: 'BrowserFillRequest',
      scroll: 'BrowserScrollRequest',
      wait: 'BrowserWaitRequest',
      hover: 'BrowserTargetRequest',
      keypress: 'BrowserKeyPressRequest',
    };
    for (const m of members) {
      const request = member(requestOf[tagOf(m)]!);
      const fields = Object.keys(m.properties).filter((name) => name !== 'type');
      assert.deepEqual(
        fields,
        Object.keys(request.properties).filter((name) => name !== 'session_id'),
        `${m.title} has the fields of ${request.title}`,
      );
    }
  });

  test('a stored screenshot takes an integer usage id; the history a bounded page', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '0x10', '1e309', '2147483648']) {
      const res = await call(server, 'GET', `/v1/browser/screenshot/${id}`, { apiKey });
      assert.deepEqual(
        problems(res).map(([loc]) => loc),
        [['path', 'usage_id']],
        id,
      );
    }
    for (const query of ['limit=0', 'limit=1001', 'limit=x', 'offset=-1']) {
      const res = await call(server, 'GET', `/v1/browser/usage/history?${query}`, { apiKey });
      assert.equal(res.status, 422, query);
    }
  });

  test('credentials: name, username, password and allowed hosts are required and bounded', async () => {
    const create = (fields: Record<string, unknown>) =>
      post('/v1/browser/credentials', { name: 'site', username: 'me', password: 'pw', allowed_hosts: ['example.com'], ...fields });
    for (const [fields, where] of [
      [{ name: undefined }, 'body.name'],
      [{ password: '' }, 'body.password'],
      [{ allowed_hosts: [] }, 'body.allowed_hosts'],
      [{ allowed_hosts: ['https://example.com/'] }, 'body.allowed_hosts.0'],
      [{ allowed_hosts: ['exa mple.com'] }, 'body.allowed_hosts.0'],
    ] as const) {
      const found = problems(await create(fields));
      assert.ok(
        found.some(([loc]) => loc.join('.') === where),
        `${JSON.stringify(fields)}: ${JSON.stringify(found)}`,
      );
    }
    const patch = await call(server, 'PATCH', '/v1/browser/credentials/cred_x', { apiKey, json: { allowed_hosts: ['*.*'] } });
    assert.equal(patch.status, 422);
  });
});

describe('browser routes answered by the service without a VM', () => {
  let server: TestServer;
  let alice: string;
  let bob: string;
  let carol: string;

  before(async () => {
    // No warm pool of either kind: nothing here may start a VM, and the check below would see one.
    server = await startTestServer({
      config: { poolSize: 0, browserPoolSize: 0, plans: { ...DEFAULT_PLANS, nobrowser: { ...DEFAULT_PLANS.free!, maxBrowserSessions: 0 } } },
    });
    alice = (await server.createUserWithKey('alice-browser')).apiKey;
    bob = (await server.createUserWithKey('bob-browser', 'pro')).apiKey;
    carol = (await server.createUserWithKey('carol-browser', 'nobrowser')).apiKey;
  });
  after(() => server.close());

  const as = (apiKey: string, method: string, url: string, json?: unknown) => call(server, method, url, { apiKey, ...(json !== undefined ? { json } : {}) });

  test('a plan without browser sessions: 429 QUOTA_EXCEEDED on session create (with or without the slash) and on render, and no VM starts', async () => {
    for (const url of ['/v1/browser/sessions', '/v1/browser/sessions/']) {
      const refused = await as(carol, 'POST', url, { viewport_width: 1024, viewport_height: 768 });
      assert.equal(refused.status, 429, `${url}: ${refused.text}`);
      assert.equal(refused.body.code, 'QUOTA_EXCEEDED');
      assert.match(refused.body.detail, /nobrowser/);
    }
    const render = await as(carol, 'POST', '/v1/browser/render', { html: '<p>x</p>' });
    assert.equal(render.status, 429, render.text);
    assert.equal(render.body.code, 'QUOTA_EXCEEDED');
    const viaBody = await call(server, 'POST', '/v1/browser/render', { json: { api_key: carol, url: 'https://example.com/' } });
    assert.equal(viaBody.status, 429, viaBody.text);
    assert.deepEqual(server.services.sandbox.engine.liveVmIds(), [], 'a refused session or render starts no VM');
    // A refused render leaves no usage record; the refused sessions none either.
    const usage = await as(carol, 'GET', '/v1/browser/usage');
    assert.deepEqual([usage.body.renders, usage.body.sessions, usage.body.active_sessions, usage.body.max_sessions], [0, 0, 0, 0]);
    assert.equal((await as(carol, 'GET', '/v1/browser/usage/history')).body.total, 0);
    assert.deepEqual((await as(carol, 'GET', '/v1/browser/sessions/')).body, { sessions: [] });
  });

  test('a session nobody has: 404 NOT_FOUND on every interaction, on read and on close', async () => {
    const nobodys = '11111111-1111-4111-8111-111111111111';
    const bodies: Record<string, Record<string, unknown>> = {
      navigate: { url: 'https://example.com/' },
      click: { selector: '#go' },
      type: { selector: '#q', text: 'otters' },
      fill: { selector: '#q', value: 'v' },
      scroll: { y: 400 },
      wait: { condition: 'load' },
      hover: { selector: '#q' },
      keypress: { key: 'Enter' },
      screenshot: {},
      extract: { selector: 'h1' },
      content: {},
      'fill-credential': { credential_id: 'cred_nobodys' },
    };
    assert.deepEqual(Object.keys(bodies).sort(), [...INTERACTIONS].sort());
    const wrong: string[] = [];
    for (const action of INTERACTIONS) {
      const res = await as(alice, 'POST', `/v1/browser/interactions/${action}`, { session_id: nobodys, ...bodies[action] });
      if (res.status !== 404 || res.body?.code !== 'NOT_FOUND') wrong.push(`${action}: ${res.status} ${res.text.slice(0, 160)}`);
    }
    assert.deepEqual(wrong, []);
    const read = await as(alice, 'GET', `/v1/browser/sessions/${nobodys}`);
    assert.deepEqual([read.status, read.body.code], [404, 'NOT_FOUND']);
    const closed = await as(alice, 'DELETE', `/v1/browser/sessions/${nobodys}`);
    assert.deepEqual([closed.status, closed.body.code], [404, 'NOT_FOUND']);
    assert.equal((await as(alice, 'GET', '/v1/browser/screenshot/2000000000')).status, 404, 'a usage record nobody has');
  });

  test("usage and its history before any browser: zeros, the plan's sessions, an empty page with the documented defaults", async () => {
    const usage = await as(bob, 'GET', '/v1/browser/usage');
    assert.equal(usage.status, 200, usage.text);
    assert.deepEqual(
      [usage.body.renders, usage.body.sessions, usage.body.pages, usage.body.screenshots, usage.body.active_sessions, usage.body.max_sessions],
      [0, 0, 0, 0, 0, DEFAULT_PLANS.pro!.maxBrowserSessions],
    );
    assert.equal(usage.body.last_30_days.renders, 0);
    const history = await as(bob, 'GET', '/v1/browser/usage/history');
    assert.equal(history.status, 200, history.text);
    assert.deepEqual(history.body, { items: [], total: 0, limit: 50, offset: 0 });
    const paged = await as(bob, 'GET', '/v1/browser/usage/history?limit=5&offset=10');
    assert.deepEqual([paged.body.limit, paged.body.offset], [5, 10]);
  });

  test("capabilities: chromium, the interactions, the default viewport, the plan's sessions", async () => {
    const caps = await as(alice, 'GET', '/v1/browser/capabilities');
    assert.equal(caps.status, 200, caps.text);
    assert.equal(caps.body.engine, 'chromium');
    assert.deepEqual([...caps.body.interactions].sort(), [...INTERACTIONS].sort());
    assert.deepEqual(caps.body.screenshot_formats, ['png', 'jpeg']);
    assert.deepEqual(caps.body.default_viewport, { width: 1280, height: 720 });
    assert.deepEqual(caps.body.max_viewport, { width: 3840, height: 2160 });
    assert.equal(caps.body.max_sessions, DEFAULT_PLANS.free!.maxBrowserSessions);
    assert.equal(caps.body.warm_pool_size, 0);
    assert.equal((await as(carol, 'GET', '/v1/browser/capabilities/')).body.max_sessions, 0);
  });

  test('auth test: the key in a header or in the body', async () => {
    const viaHeader = await as(alice, 'POST', '/v1/browser/auth/test', {});
    assert.equal(viaHeader.status, 200, viaHeader.text);
    assert.deepEqual([viaHeader.body.authenticated, viaHeader.body.username, viaHeader.body.plan], [true, 'alice-browser', 'free']);
    const viaBody = await call(server, 'POST', '/v1/browser/auth/test', { json: { api_key: bob } });
    assert.equal(viaBody.status, 200, viaBody.text);
    assert.deepEqual([viaBody.body.username, viaBody.body.plan], ['bob-browser', 'pro']);
  });

  test("credentials: 201 without the password, list, update, 409 on a second of a name, 204 on delete, another user's is 404", async () => {
    const created = await as(alice, 'POST', '/v1/browser/credentials', {
      name: 'shop',
      username: 'alice@example.com',
      password: 'hunter2-secret',
      allowed_hosts: ['shop.example.com', '*.example.org'],
    });
    assert.equal(created.status, 201, created.text);
    assert.ok(!created.text.includes('hunter2-secret'), 'the password is never answered');
    assert.deepEqual(
      [created.body.name, created.body.username, created.body.allowed_hosts, created.body.last_used_at],
      ['shop', 'alice@example.com', ['shop.example.com', '*.example.org'], null],
    );
    const id = created.body.credential_id as string;
    const second = await as(alice, 'POST', '/v1/browser/credentials', { name: 'shop', username: 'x', password: 'y', allowed_hosts: ['a.example'] });
    assert.deepEqual([second.status, second.body.code], [409, 'CONFLICT']);
    assert.equal(
      (await as(bob, 'POST', '/v1/browser/credentials', { name: 'shop', username: 'b', password: 'c', allowed_hosts: ['b.example'] })).status,
      201,
      'names are per user',
    );
    const listed = await as(alice, 'GET', '/v1/browser/credentials');
    assert.deepEqual(
      listed.body.credentials.map((c: { name: string }) => c.name),
      ['shop'],
    );
    assert.ok(!listed.text.includes('hunter2-secret'));
    const read = await as(alice, 'GET', `/v1/browser/credentials/${id}`);
    assert.deepEqual(read.body, created.body);
    const updated = await as(alice, 'PATCH', `/v1/browser/credentials/${id}`, { allowed_hosts: ['shop.example.com'], password: 'new-secret-value' });
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual([updated.body.allowed_hosts, updated.body.username], [['shop.example.com'], 'alice@example.com']);
    assert.ok(!updated.text.includes('new-secret-value'));
    assert.deepEqual((await as(alice, 'GET', `/v1/browser/credentials/${id}`)).body.allowed_hosts, ['shop.example.com'], 'the change is kept');
    for (const [method, json] of [
      ['GET', undefined],
      ['PATCH', { username: 'bob' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await as(bob, method, `/v1/browser/credentials/${id}`, json);
      assert.deepEqual([res.status, res.body?.code], [404, 'NOT_FOUND'], `${method} of another user's credential`);
    }
    const deleted = await as(alice, 'DELETE', `/v1/browser/credentials/${id}`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    assert.equal((await as(alice, 'GET', `/v1/browser/credentials/${id}`)).status, 404);
    assert.deepEqual((await as(alice, 'GET', '/v1/browser/credentials')).body, { credentials: [] });
  });
});
