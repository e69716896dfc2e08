/**
 * Answers read in camelCase (`camel-case.ts`): each snake_case field has a camelCase getter, durations in seconds a
 * `…Ms` one, all the way down, while the JSON itself (keys, spreads, equality) stays what the API sent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withCamelCase } from '../src/camel-case.ts';

const answer = () => ({
  execution_id: 7,
  exit_code: 0,
  stdout: 'hi\n',
  execution_time: 1.25,
  cpu_time: null,
  expires_in_seconds: 30,
  duration_ms: 12,
  results: [{ is_main_result: true, text: '2' }],
  metadata: { MY_VAR: 'x', team_name: 'a' },
});

test('camelCase names read the snake_case fields; seconds read as milliseconds', () => {
  const result = withCamelCase(answer());
  assert.equal(result.exitCode, 0);
  assert.equal(result.executionId, 7);
  assert.equal(result.executionTimeMs, 1250);
  assert.equal(result.cpuTimeMs, null);
  assert.equal(result.expiresInMs, 30_000);
  assert.equal(result.durationMs, 12, 'a field already in milliseconds keeps its value');
  assert.equal(result.results[0]!.isMainResult, true, 'nested objects in arrays too');
  assert.equal((result.metadata as Record<string, unknown>).MYVAR, undefined, 'upper-case keys (environment names) are left alone');
  result.exit_code = 3;
  assert.equal(result.exitCode, 3, 'the two names cannot disagree');
});

test('the JSON is what the API sent: keys, spreads, stringify and deep equality', () => {
  const result = withCamelCase(answer());
  assert.deepEqual(Object.keys(result), Object.keys(answer()));
  assert.equal(JSON.stringify(result), JSON.stringify(answer()));
  assert.deepStrictEqual({ ...result }, answer());
  assert.deepStrictEqual(result, answer());
});

test('a field the answer has under the camelCase name already is not shadowed; anything but plain objects is left as it is', () => {
  const both = withCamelCase({ exit_code: 1, exitCode: 2 });
  assert.equal(both.exitCode, 2);
  assert.equal(withCamelCase(null), null);
  assert.equal(withCamelCase('text'), 'text');
  const bytes = new Uint8Array([1, 2]);
  assert.equal(withCamelCase(bytes), bytes);
  const twice = withCamelCase(withCamelCase({ exit_code: 4 }));
  assert.equal(twice.exitCode, 4);
});
