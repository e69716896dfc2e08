// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * The served OpenAPI document is version 0.1.0 and lists every operation of the interface spec
 * (docs/spec/interface.md, a copy of the spec); operations of later issues answer 501.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const SPEC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../docs/spec/interface.md');

/** (method, path) pairs from the endpoint tables of the spec. */
function specOperations(): { method: string; path: string }[] {
  const operations: { method: string; path: string }[] = [];
  for (const line of fs.readFileSync(SPEC, 'utf8').split('\n')) {
    const match = /^\| ([A-Z, ]+) \| (\/[^\s|]+)/.exec(line);
    if (!match) continue;
    for (const method of match[1]!.split(',').map((m) => m.trim())) {
      if (method !== 'WS') operations.push({ method: method.toLowerCase(), path: match[2]! });
    }
  }
  return operations;
}

describe('OpenAPI document', () => {
  let server: TestServer;
  let doc: any;

  before(async () => {
    server = await startTestServer();
    doc = (await call(server, 'GET', '/openapi.json')).body;
  });
  after(() => server.close());

  test('is OpenAPI 3 with version 0.1.0 and both security schemes', () => {
    assert.match(doc.openapi, /^3\./);
    assert.equal(doc.info.version, '0.1.0');
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['APIKeyHeader', 'OAuth2PasswordBearer']);
  });

  test('lists every operation of the spec', () => {
    const operations = specOperations();
    assert.ok(operations.length >= 70, `parsed ${operations.length} operations from the spec`);
    const missing = operations.filter(({ method, path: p }) => !doc.paths[p]?.[method]);
    assert.deepEqual(missing, []);
  });

  test('shared schemas are named components, and the 422 response is HTTPValidationError', () => {
    for (const name of ['HTTPValidationError', 'ValidationError', 'ErrorResponse', 'ApiKeyRecord']) assert.ok(doc.components.schemas[name], name);
    const response = doc.paths['/v1/api-keys/'].post.responses['422'];
    assert.match(JSON.stringify(response), /HTTPValidationError/);
  });

  test('authenticated operations declare the bearer and API key schemes; the CLI login start does not', () => {
    assert.deepEqual(doc.paths['/v1/api-keys/'].get.security, [{ OAuth2PasswordBearer: [] }, { APIKeyHeader: [] }]);
    assert.equal(doc.paths['/api/cli-auth/start'].post.security, undefined);
  });

  test('the interactive docs are served at /docs', async () => {
    const res = await fetch(`${server.baseUrl}/docs/`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /swagger/i);
  });

  test('deprecated operations are marked', () => {
    assert.equal(doc.paths['/v1/sessions/session'].post.deprecated, true);
  });
});
