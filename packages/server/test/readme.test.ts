/**
 * The README starts with the two set-up commands and sends readers to the docs; every setting the server reads is
 * documented in the configuration reference the README links (docs/reference/configuration.md, generated:
 * test/docs/configuration-reference.test.ts keeps it current).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeSettings } from '../src/config/index.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const REFERENCE = fs.readFileSync(path.join(ROOT, 'docs/reference/configuration.md'), 'utf8');

test('every setting is in the configuration reference table', () => {
  const missing = describeSettings().filter((s) => !REFERENCE.includes(`| \`${s.env}\` |`));
  assert.deepEqual(missing, []);
});

test('the README starts its set-up with npm start and npm test', () => {
  assert.match(README, /npm start[\s\S]*npm test/);
});

test('the README links the docs map, the quickstarts and the configuration reference', () => {
  for (const target of ['docs/index.md', 'docs/quickstart/curl.md', 'docs/reference/configuration.md']) assert.ok(README.includes(`](${target})`), target);
});
