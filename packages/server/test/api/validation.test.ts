// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Bad input answers 422 with exactly FastAPI's shape, for bodies, queries and path parameters, and
 * never a 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

/** Asserts the exact 422 shape and returns the detail items. */
function details(res: { status: number; body: any }): { loc: (string | number)[]; msg: string; type: string }[] {
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['detail']);
  assert.ok(Array.isArray(res.body.detail) && res.body.detail.length > 0);
  for (const item of res.body.detail) {
    assert.deepEqual(Object.keys(item).sort(), ['loc', 'msg', 'type']);
    assert.ok(['body', 'query', 'path', 'header'].includes(item.loc[0]), `loc starts with a location: ${item.loc}`);
    assert.equal(typeof item.msg, 'string');
    assert.equal(typeof item.type, 'string');
  }
  return res.body.detail;
}

describe('422 validation errors', () => {
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    server = await startTestServer();
    ({ apiKey } = await server.createUserWithKey('val'));
  });
  after(() => server.close());

  test('malformed JSON body: loc ["body", position], type json_invalid', async () => {
    const [item] = details(await call(server, 'POST', '/v1/api-keys/', { apiKey, body: '{"description": ', headers: { 'content-type': 'application/json' } }));
    assert.equal(item!.loc[0], 'body');
    assert.equal(typeof item!.loc[1], 'number');
    assert.equal(item!.type, 'json_invalid');
  });

  test('wrong field types in the body: one item per field, at its location', async () => {
    const items = details(await call(server, 'POST', '/v1/api-keys/', { apiKey, json: { expires_at: 'tomorrow', description: 42 } }));
    assert.deepEqual(
      items.map((i) => [i.loc, i.type]),
      [
        [['body', 'expires_at'], 'datetime_parsing'],
        [['body', 'description'], 'string_type'],
      ],
    );
  });

  test('a body that is not an object', async () => {
    const [item] = details(await call(server, 'PATCH', '/v1/api-keys/1', { apiKey, json: [1, 2] }));
    assert.deepEqual(item!.loc, ['body']);
    assert.equal(item!.type, 'model_attributes_type');
  });

  test('a missing required body field: type missing', async () => {
    const items = details(await call(server, 'POST', '/v1/auth/token', { form: { username: 'val' } }));
    assert.deepEqual(
      items.map((i) => [i.loc, i.type, i.msg]),
      [[['body', 'password'], 'missing', 'Field required']],
    );
  });

  test('a missing body where one is required', async () => {
    const items = details(await call(server, 'PATCH', '/v1/api-keys/1', { apiKey }));
    assert.deepEqual(
      items.map((i) => [i.loc, i.type]),
      [[['body'], 'missing']],
    );
  });

  test('a path parameter that is not an integer: loc ["path", "item_id"], int_parsing', async () => {
    const items = details(await call(server, 'GET', '/v1/api-keys/abc', { apiKey }));
    assert.deepEqual(
      items.map((i) => [i.loc, i.type]),
      [[['path', 'item_id'], 'int_parsing']],
    );
  });

  test('query parameters out of range or of the wrong type: loc ["query", name]', async () => {
    const low = details(await call(server, 'GET', '/v1/sessions/sandboxes?limit=0', { apiKey }));
    assert.deepEqual(
      low.map((i) => [i.loc, i.type]),
      [[['query', 'limit'], 'greater_than_equal']],
    );
    const high = details(await call(server, 'GET', '/v1/webhooks/deliveries?limit=201', { apiKey }));
    assert.deepEqual(
      high.map((i) => [i.loc, i.type]),
      [[['query', 'limit'], 'less_than_equal']],
    );
    const text = details(await call(server, 'GET', '/v1/sessions/app-url/s1?port=http', { apiKey }));
    assert.deepEqual(
      text.map((i) => [i.loc, i.type]),
      [[['query', 'port'], 'int_parsing']],
    );
  });

  test('ids and numbers in paths and queries are canonical decimal integers only: 0x3, 3e0, +3 are not 3', async () => {
    const created = await call(server, 'POST', '/v1/api-keys/', { apiKey, json: { description: 'number 3 or so' } });
    const id = created.body.id as number;
    assert.equal((await call(server, 'GET', `/v1/api-keys/${id}`, { apiKey })).status, 200, 'control');
    const lookalikes = [`0x${id.toString(16)}`, `${id}e0`, `+${id}`, `0${id}`, `${id}.0`, `%20${id}`, `${id}%20`, `0b${id.toString(2)}`];
    for (const text of lookalikes) {
      const items = details(await call(server, 'GET', `/v1/api-keys/${text}`, { apiKey }));
      assert.deepEqual(
        items.map((i) => [i.loc, i.type]),
        [[['path', 'item_id'], 'int_parsing']],
        text,
      );
    }
    for (const text of ['0x3', '3e0', '+3', '03']) {
      const items = details(await call(server, 'GET', `/v1/executions/?limit=${encodeURIComponent(text)}`, { apiKey }));
      assert.deepEqual(
        items.map((i) => [i.loc, i.type]),
        [[['query', 'limit'], 'int_parsing']],
        text,
      );
      assert.equal((await call(server, 'GET', `/v1/executions/${encodeURIComponent(text)}`, { apiKey })).status, 422, text);
      assert.equal((await call(server, 'GET', `/v1/events/stream?last_event_id=${encodeURIComponent(text)}`, { apiKey })).status, 422, text);
    }
    const header = await call(server, 'GET', '/v1/events/stream', { apiKey, headers: { 'last-event-id': '0x3' } });
    assert.equal(header.status, 400, 'Last-Event-ID too');
  });

  test('other malformed input gets a 4xx with a code, never a 500', async () => {
    const wrongType = await call(server, 'POST', '/v1/api-keys/', { apiKey, body: 'description=x', headers: { 'content-type': 'text/csv' } });
    assert.equal(wrongType.status, 415);
    assert.equal(wrongType.body.code, 'UNSUPPORTED_MEDIA_TYPE');
    const huge = await call(server, 'POST', '/v1/api-keys/', { apiKey, json: { description: 'x'.repeat(11 * 1024 * 1024) } });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.code, 'PAYLOAD_TOO_LARGE');
    const unknown = await call(server, 'GET', '/v1/no-such-thing', { apiKey });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'NOT_FOUND');
    const hugeId = await call(server, 'GET', '/v1/api-keys/99999999999999999999999', { apiKey });
    assert.ok(hugeId.status === 404 || hugeId.status === 422, `status ${hugeId.status}`);
  });
});
