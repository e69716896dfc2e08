/** docs/errors.md and the code's error table list the same codes with the same statuses. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../src/core/errors.ts';

test('docs/errors.md lists exactly the error codes of the code, with their statuses', () => {
  const doc = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/errors.md'), 'utf8');
  const documented: Record<string, number> = {};
  for (const match of doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)) documented[match[1]!] = Number(match[2]);
  assert.deepEqual(documented, { ...ERROR_CODES });
});
