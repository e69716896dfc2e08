/**
 * The API reference page (scripts/build-api-docs.mjs → docs/reference/api/index.html, served at /docs/reference):
 * generated from the committed OpenAPI document with Redoc inlined, it names every operation and asks the network
 * for nothing; the route serves it under a policy that allows its own scripts only, and answers 404 with the
 * command that builds it when it is not built.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import Fastify from 'fastify';
import { registerApiReference } from '../../src/api/api-reference.ts';
import type { App } from '../../src/api/types.ts';
// @ts-expect-error: a plain .mjs script of the set-up, without declarations
import { OPENAPI_FILE, renderApiReference } from '../../../../scripts/build-api-docs.mjs';

const html = renderApiReference() as string;
const document = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> };
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-api-reference-'));
after(() => fs.rmSync(work, { recursive: true, force: true }));

test('the page carries the served document and Redoc inline, and nothing from the network', () => {
  const inlined = /Redoc\.init\(([\s\S]*?), \{"hideDownloadButton"/.exec(html);
  assert.ok(inlined, 'Redoc.init with the document');
  assert.deepEqual(JSON.parse(inlined[1]!.replace(/<\\\//g, '</')), document, 'the document as served');
  assert.ok(html.length > 500_000, 'the Redoc bundle inlined');
  const outside = html.replace(/<script>[\s\S]*?<\/script>/g, '');
  assert.doesNotMatch(outside, /\b(src|href)=/, 'no external script, style or font');
  assert.doesNotMatch(html, /cdn\.redoc\.ly|fonts\.googleapis/, 'not even the vendor logo');
  assert.equal(html.match(/<\/script>/g)?.length, 2, 'nothing in the inlined text closes its element early');
});

test('/docs/reference serves the built page under a policy that allows only its own scripts', async () => {
  const file = path.join(work, 'index.html');
  fs.writeFileSync(file, html);
  const app = Fastify();
  registerApiReference(app as unknown as App, file);
  try {
    const res = await app.inject({ method: 'GET', url: '/docs/reference' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    const policy = String(res.headers['content-security-policy']);
    assert.match(policy, /default-src 'none'/);
    assert.equal(policy.match(/'sha256-[A-Za-z0-9+/=]+'/g)?.length, 2, 'the two scripts by hash');
    assert.doesNotMatch(policy, /unsafe-eval|script-src[^;]*unsafe-inline/);
    assert.equal(res.body, html);
  } finally {
    await app.close();
  }
});

test('not built: 404 with the command that builds it', async () => {
  const app = Fastify();
  registerApiReference(app as unknown as App, path.join(work, 'missing.html'));
  try {
    const res = await app.inject({ method: 'GET', url: '/docs/reference' });
    assert.equal(res.statusCode, 404);
    assert.match(res.body, /npm run docs:api/);
  } finally {
    await app.close();
  }
});

test("the served document's description links the page", () => {
  assert.match(JSON.stringify(document), /\(\/docs\/reference\)/);
});
