/** docs/reference/configuration.md is what scripts/docs-config.mts writes from the configuration schema, so it cannot rot. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { describeSettings } from '../../src/config/index.ts';
import { CONFIGURATION_FILE, renderConfigurationReference } from '../../../../scripts/docs-config.mts';

test('the committed configuration reference is the one the schema writes (npm run docs:config)', () => {
  assert.equal(fs.readFileSync(CONFIGURATION_FILE, 'utf8'), renderConfigurationReference(), 'stale: run npm run docs:config');
});

test('every setting has a row with its default and description', () => {
  const reference = fs.readFileSync(CONFIGURATION_FILE, 'utf8');
  const missing = describeSettings().filter((s) => !new RegExp(`^\\| \`${s.env}\` \\| [^|]+ \\| .+ \\|$`, 'm').test(reference));
  assert.deepEqual(missing, []);
});
