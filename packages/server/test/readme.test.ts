/** The README documents every configuration variable the server reads, and the two set-up commands. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeSettings } from '../src/config/index.ts';

const README = fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../README.md'), 'utf8');

test('every SANDBOXD_* setting is in the README configuration table', () => {
  const missing = describeSettings().filter((s) => !README.includes(`| \`${s.env}\` |`));
  assert.deepEqual(missing, []);
});

test('the README starts its set-up with npm start and npm test', () => {
  assert.match(README, /npm start[\s\S]*npm test/);
});
