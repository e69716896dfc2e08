// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Numbers are finite and bounded everywhere, and malformed multipart bodies are the client's fault: the
 * fuzzer's 13 inputs that answered 500 now answer 4xx, and every numeric input of the served document
 * declares a minimum and a maximum.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('numbers and multipart bodies', () => {
  let server: TestServer;
  let apiKey: string;
  let sessionId: string;

  before(async () => {
    server = await startTestServer();
    ({ apiKey } = await server.createUserWithKey('bounds'));
    sessionId = (await call(server, 'POST', '/v1/sessions/session', { apiKey, json: {} })).body.session_id;
  });
  after(() => server.close());

  test('infinite, huge and non-numeric limits and offsets on list routes: 422 at the parameter, never 500', async () => {
    const lists = ['/v1/executions/', '/v1/vms', '/v1/sessions/sandboxes', '/v1/webhooks/deliveries', '/v1/audit/events', '/v1/browser/usage/history'];
    for (const list of lists) {
      for (const value of ['1e309', '-Infinity', 'Infinity', 'NaN', '1e20']) {
        const res = await call(server, 'GET', `${list}?limit=${value}`, { apiKey });
        assert.equal(res.status, 422, `${list}?limit=${value}: ${res.status} ${res.text.slice(0, 200)}`);
        assert.deepEqual(res.body.detail[0].loc, ['query', 'limit']);
      }
    }
    for (const value of ['1e20', '1e309', '-Infinity', '-1']) {
      const res = await call(server, 'GET', `/v1/executions/?offset=${value}`, { apiKey });
      assert.equal(res.status, 422, `offset=${value}: ${res.status} ${res.text.slice(0, 200)}`);
    }
    assert.equal((await call(server, 'GET', '/v1/executions/?offset=2147483647', { apiKey })).status, 200, 'the largest offset works');
  });

  test('port=1e309 on app-url: 422', async () => {
    const res = await call(server, 'GET', `/v1/sessions/app-url/${sessionId}?port=1e309`, { apiKey });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual(res.body.detail[0].loc, ['query', 'port']);
  });

  test('1e309 in a JSON body is not a number: 422', async () => {
    const res = await call(server, 'POST', '/execute', {
      apiKey,
      body: `{"code":"1","timeout":1e309,"session_id":"${sessionId}"}`,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 422, res.text);
    assert.deepEqual(res.body.detail[0].loc, ['body', 'timeout']);
  });

  test('multipart with no boundary, a boundary over 70 characters, or a truncated or garbled body: 400', async () => {
    const upload = (contentType: string, body: string) =>
      fetch(`${server.baseUrl}/upload`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': contentType }, body });
    const long = 'b'.repeat(300);
    const cases: [string, string, string][] = [
      ['no boundary', 'multipart/form-data', '--x\r\n'],
      [
        'boundary of 300 characters',
        `multipart/form-data; boundary=${long}`,
        `--${long}\r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--${long}--\r\n`,
      ],
      ['truncated file part', 'multipart/form-data; boundary=abc', '--abc\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nsome bytes'],
      ['truncated field', 'multipart/form-data; boundary=abc', '--abc\r\nContent-Disposition: form-data; name="session_id"\r\n\r\nv'],
      ['garbage', 'multipart/form-data; boundary=abc', 'garbage'],
    ];
    for (const [label, contentType, body] of cases) {
      const res = await upload(contentType, body);
      const answer = (await res.json()) as { code: string; detail: string };
      assert.equal(res.status, 400, `${label}: ${res.status} ${JSON.stringify(answer)}`);
      assert.equal(answer.code, 'BAD_REQUEST', label);
    }
  });

  test('every numeric input of every operation declares a minimum and a maximum', async () => {
    const doc = (await call(server, 'GET', '/openapi.json')).body;
    const unbounded: string[] = [];
    const visit = (schema: any, where: string, seen = new Set<unknown>()): void => {
      if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
      seen.add(schema);
      if (typeof schema.$ref === 'string') return visit(doc.components.schemas[schema.$ref.split('/').pop()], where, seen);
      const types = [schema.type].flat();
      if ((types.includes('integer') || types.includes('number')) && !schema.enum && !(Number.isFinite(schema.minimum) && Number.isFinite(schema.maximum)))
        unbounded.push(where);
      for (const [name, property] of Object.entries(schema.properties ?? {})) visit(property, `${where}.${name}`, seen);
      for (const key of ['items', 'additionalProperties']) visit(schema[key], `${where}[]`, seen);
      for (const key of ['anyOf', 'oneOf', 'allOf']) for (const branch of schema[key] ?? []) visit(branch, where, seen);
    };
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        for (const parameter of operation.parameters ?? []) visit(parameter.schema, `${method.toUpperCase()} ${path} ${parameter.in} ${parameter.name}`);
        for (const [type, content] of Object.entries<any>(operation.requestBody?.content ?? {}))
          visit(content.schema, `${method.toUpperCase()} ${path} body (${type})`);
      }
    }
    assert.deepEqual(unbounded, []);
  });
});
