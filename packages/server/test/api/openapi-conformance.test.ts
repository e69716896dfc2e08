/**
 * The check that every response of the test suite matches the served document (helpers/openapi-conformance.ts)
 * catches drift: an undeclared status, a body that breaks its schema, an undeclared content type, each
 * replaced by 599 OPENAPI_VIOLATION and recorded, whatever the client.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { Type } from 'typebox';
import { buildApp, type BuiltApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { fastifySerializerFactory } from '../../src/api/serializer-compiler.ts';
import { instrumentApp, VIOLATION_STATUS, type OpenApiConformance } from '../helpers/openapi-conformance.ts';
import { EPHEMERAL_LISTENERS } from '../helpers/ports.ts';

/** Holds 127.0.0.1:`port` while it is free; null when another process holds it already (the same for the app). */
async function holdPort(port: number): Promise<net.Server | null> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('OpenAPI conformance check', () => {
  let built: BuiltApp;
  let checker: () => OpenApiConformance;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-conformance-'));
  let held: (net.Server | null)[] = [];

  before(async () => {
    // The ports the app's other listeners take by default (SSH 2222; admin and internal beside the default 8080)
    // are taken, as another sandboxd on the machine takes them: the app a test builds must not need them (this
    // file once failed with EADDRINUSE 127.0.0.1:2222 whenever another server ran).
    held = await Promise.all([2222, 8081, 8082].map(holdPort));
    built = await buildApp({
      config: loadConfig({}, { dataDir, logLevel: 'silent', ...EPHEMERAL_LISTENERS }),
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
    // Ready here, where a listener that cannot bind fails the file at once (inject would wait for it).
    await built.app.ready();
  });
  after(async () => {
    await built.app.close();
    for (const server of held) server?.close();
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

  test("every response schema compiles with Fastify's serializer (the app compiles each on first use)", async () => {
    // serializer-compiler.ts moved compiling from the start to a route's first answer, so a schema the
    // serializer cannot take would only fail there: here all of them are compiled, as the start once did.
    const doc = (await built.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const inDocument = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll('"#/components/', '"openapi.json#/components/'));
    const compile = fastifySerializerFactory()({ 'openapi.json': { $id: 'openapi.json', components: inDocument(doc.components) } }, {});
    let compiled = 0;
    for (const [url, item] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        for (const [httpStatus, response] of Object.entries<any>(operation.responses ?? {})) {
          for (const [contentType, media] of Object.entries<any>(response.content ?? {})) {
            if (!media.schema) continue;
            assert.equal(
              typeof compile({ schema: inDocument(media.schema), method, url, httpStatus, contentType }),
              'function',
              `${method} ${url} ${httpStatus}`,
            );
            compiled++;
          }
        }
      }
    }
    assert.ok(compiled > 500, `${compiled} response schemas`);
  });
});
