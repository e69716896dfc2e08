/**
 * The checked-in `src/generated/openapi.ts` is exactly what the server's current OpenAPI document
 * generates: a route change without `npm run generate -w @sandboxd/sdk` fails here.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { GENERATED_FILE, renderOpenApiTypes } from '../scripts/generate-types.ts';

test('the generated API types match the served OpenAPI document (run `npm run generate -w @sandboxd/sdk` if not)', async () => {
  const expected = await renderOpenApiTypes();
  const actual = fs.readFileSync(GENERATED_FILE, 'utf8');
  if (actual === expected) return;
  const [a, e] = [actual.split('\n'), expected.split('\n')];
  const found = a.findIndex((text, i) => text !== e[i]);
  const line = found === -1 ? a.length : found;
  assert.fail(
    `packages/sdk/src/generated/openapi.ts is stale: run \`npm run generate -w @sandboxd/sdk\` and commit the result.\n` +
      `First difference at line ${line + 1}:\n  checked in: ${a[line] ?? '(end of file)'}\n  generated:  ${e[line] ?? '(end of file)'}`,
  );
});

test('the generated types cover the operations the client calls', () => {
  const text = fs.readFileSync(GENERATED_FILE, 'utf8');
  for (const path of [
    '/execute',
    '/v1/execute_async',
    '/kill',
    '/upload',
    '/download',
    '/v1/sessions/session',
    '/v1/sessions/sandboxes',
    '/v1/executions/{item_id}',
    '/v1/vms',
    '/v1/api-keys/',
    '/api/cli-auth/exchange',
  ]) {
    assert.ok(text.includes(`"${path}": {`), path);
  }
});
