/** Configuration: defaults, parsing, and errors that name the variable. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

test('defaults: 127.0.0.1:8080, ./.sandboxd, SQLite, the three plans', () => {
  const config = loadConfig({});
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.port, 8080);
  assert.equal(config.dataDir, path.resolve('.sandboxd'));
  assert.equal(config.databaseUrl, null);
  assert.equal(config.publicUrl, 'http://127.0.0.1:8080');
  assert.deepEqual(Object.keys(config.plans).sort(), ['enterprise', 'free', 'pro']);
});

test('values are parsed from SANDBOXD_* variables', () => {
  const config = loadConfig({
    SANDBOXD_HOST: '0.0.0.0',
    SANDBOXD_PORT: '9000',
    SANDBOXD_DATABASE_URL: 'postgres://u@h/db',
    SANDBOXD_PLANS: '{"team":{"executionsPerMinute":5,"maxConcurrentVms":1,"maxTotalVcpus":2}}',
    SANDBOXD_DEFAULT_PLAN: 'team',
  });
  assert.equal(config.port, 9000);
  assert.equal(config.databaseUrl, 'postgres://u@h/db');
  assert.equal(config.plans.team?.maxTotalVcpus, 2);
  assert.ok(config.plans.free, 'built-in plans stay');
});

test('bad values fail with the variable named', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ SANDBOXD_PORT: '80a' }, /SANDBOXD_PORT/],
    [{ SANDBOXD_PORT: '70000' }, /SANDBOXD_PORT/],
    [{ SANDBOXD_DATABASE_URL: 'mysql://x' }, /SANDBOXD_DATABASE_URL/],
    [{ SANDBOXD_LOG_LEVEL: 'loud' }, /SANDBOXD_LOG_LEVEL/],
    [{ SANDBOXD_AUTH_SECRET: 'short' }, /SANDBOXD_AUTH_SECRET/],
    [{ SANDBOXD_PLANS: '{"x":{"executionsPerMinute":0}}' }, /SANDBOXD_PLANS/],
    [{ SANDBOXD_DEFAULT_PLAN: 'gold' }, /SANDBOXD_DEFAULT_PLAN/],
  ];
  for (const [env, pattern] of cases) assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && pattern.test(e.message));
});
