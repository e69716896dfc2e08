// test-lane: heavy (builds the app: its listeners, and egress enforcement when root)
/**
 * The committed `openapi.json` is exactly the document the server serves: the clients' type generators read that
 * file, so a route change without `npm run generate -w @sandboxd/sdk` (which writes it) fails here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { OPENAPI_FILE, renderOpenApiDocument } from '../scripts/write-openapi.ts';

test('openapi.json is the served OpenAPI document (run `npm run generate -w @sandboxd/sdk` if not)', async () => {
  const expected = await renderOpenApiDocument();
  const actual = fs.existsSync(OPENAPI_FILE) ? fs.readFileSync(OPENAPI_FILE, 'utf8') : '';
  if (actual === expected) return;
  const [a, e] = [actual.split('\n'), expected.split('\n')];
  const found = a.findIndex((text, i) => text !== e[i]);
  const line = found === -1 ? a.length : found;
  assert.fail(
    `packages/server/openapi.json is stale: run \`npm run generate -w @sandboxd/sdk\` and commit the result.\n` +
      `First difference at line ${line + 1}:\n  committed: ${a[line] ?? '(end of file)'}\n  served:    ${e[line] ?? '(end of file)'}`,
  );
});
