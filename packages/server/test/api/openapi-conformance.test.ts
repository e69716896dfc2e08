/**
 * The check that every response of the test suite matches the served document (helpers/openapi-conformance.ts)
 * catches drift: an undeclared status, a body that breaks its schema, an undeclared content type, each
 * replaced by 599 OPENAPI_VIOLATION and recorded, whatever the client.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { Type } from 'typebox';
import { buildApp, type BuiltApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { instrumentApp, VIOLATION_STATUS, type OpenApiConformance } from '../helpers/openapi-conformance.ts';

describe('OpenAPI conformance check', () => {
  let built: BuiltApp;
  let checker: () => OpenApiConformance;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-conformance-'));

  before(async () => {
    built = await buildApp({
      config: loadConfig({}, { dataDir, logLevel: 'silent' }),
      logger: false,
      instrument: (app) => {
        // Routes that break their own declarations, the way drift does.
        const plain = app as unknown as FastifyInstance;
        const schema: FastifySchema = { response: { 200: Type.Object({ count: Type.Integer() }) } };
        plain.get('/drift/wrong-body', { schema }, async (_request, reply) =>
          reply.header('content-type', 'application/json; charset=utf-8').serializer(JSON.stringify).send({ count: 'many' }),
        );
        plain.get('/drift/wrong-status', { schema }, async (_request, reply) => reply.code(409).send({ detail: 'x', code: 'CONFLICT' }));
        plain.get('/drift/wrong-type', { schema }, async (_request, reply) => reply.header('content-type', 'text/plain').send('3'));
        plain.get('/drift/right', { schema }, async () => ({ count: 3 }));
        checker = instrumentApp(app);
      },
    });
  });
  after(async () => {
    await built.app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('a body that breaks its schema, an undeclared status and an undeclared content type are each 599 and recorded', async () => {
    const cases: [string, RegExp][] = [
      ['/drift/wrong-body', /does not match the schema.*\/count must be integer/],
      ['/drift/wrong-status', /status 409 is not declared/],
      ['/drift/wrong-type', /content type text\/plain is not declared/],
    ];
    for (const [url, reason] of cases) {
      const res = await built.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, VIOLATION_STATUS, url);
      assert.equal(res.json().code, 'OPENAPI_VIOLATION');
      assert.match(res.json().detail, reason);
    }
    assert.equal(checker().violations.length, 3);
  });

  test('a conforming response, and a route the document does not list, pass untouched', async () => {
    assert.deepEqual((await built.app.inject({ method: 'GET', url: '/drift/right' })).json(), { count: 3 });
    assert.equal((await built.app.inject({ method: 'GET', url: '/no/such/route' })).statusCode, 404);
    assert.equal((await built.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode, 200);
    assert.equal(checker().violations.length, 3, 'nothing new recorded');
  });
});
