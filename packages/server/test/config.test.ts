/** Configuration: defaults, parsing, and errors that name the variable. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../src/config/index.ts';

test('defaults: 127.0.0.1:8080, ./.sandboxd, SQLite, the three plans', () => {
  const config = loadConfig({});
  assert.equal(config.server.host, '127.0.0.1');
  assert.equal(config.server.port, 8080);
  assert.equal(config.server.dataDir, path.resolve('.sandboxd'));
  assert.equal(config.server.databaseUrl, null);
  assert.equal(config.server.publicUrl, 'http://127.0.0.1:8080');
  assert.deepEqual(Object.keys(config.auth.plans).sort(), ['enterprise', 'free', 'pro']);
});

test('values are parsed from SANDBOXD_* variables', () => {
  const config = loadConfig({
    SANDBOXD_HOST: '0.0.0.0',
    SANDBOXD_PORT: '9000',
    SANDBOXD_DATABASE_URL: 'postgres://u@h/db',
    SANDBOXD_PLANS: '{"team":{"executionsPerMinute":5,"maxConcurrentVms":1,"maxTotalVcpus":2}}',
    SANDBOXD_DEFAULT_PLAN: 'team',
  });
  assert.equal(config.server.port, 9000);
  assert.equal(config.server.databaseUrl, 'postgres://u@h/db');
  assert.equal(config.auth.plans.team?.maxTotalVcpus, 2);
  assert.ok(config.auth.plans.free, 'built-in plans stay');
});

test("every plan has a disk quota: a plan that leaves diskMb out keeps its built-in namesake's, else free's", () => {
  const config = loadConfig({
    SANDBOXD_PLANS: JSON.stringify({
      team: { executionsPerMinute: 5, maxConcurrentVms: 1, maxTotalVcpus: 2 },
      pro: { executionsPerMinute: 5, maxConcurrentVms: 1, maxTotalVcpus: 2 },
      big: { executionsPerMinute: 5, maxConcurrentVms: 1, maxTotalVcpus: 2, diskMb: 65_536 },
    }),
  });
  assert.deepEqual([config.auth.plans.team?.diskMb, config.auth.plans.pro?.diskMb, config.auth.plans.big?.diskMb], [4096, 8192, 65_536]);
  assert.deepEqual([loadConfig({}).auth.plans.free?.diskMb, loadConfig({}).auth.plans.enterprise?.diskMb], [4096, 16_384]);
});

test('CPU and disk settings of the host: a CPU reserve, a VM CPU weight and a free-space floor', () => {
  const config = loadConfig({ SANDBOXD_HOST_CPU_RESERVE: '1.5', SANDBOXD_VM_CPU_WEIGHT: '25', SANDBOXD_MIN_FREE_DISK_MB: '0' });
  assert.deepEqual([config.vm.hostCpuReserve, config.vm.vmCpuWeight, config.vm.minFreeDiskMb], [1.5, 25, 0]);
  assert.deepEqual([loadConfig({}).vm.hostCpuReserve, loadConfig({}).vm.vmCpuWeight, loadConfig({}).vm.minFreeDiskMb], [0.5, 100, 2048]);
});

test('custom domain settings: DNS servers as IP addresses with optional ports, timeouts and intervals', () => {
  const config = loadConfig({ SANDBOXD_DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,::1,[2001:db8::53]:53', SANDBOXD_CUSTOM_DOMAIN_CHECK_INTERVAL_SECONDS: '30' });
  assert.deepEqual(config.domains.dnsServers, ['1.1.1.1', '127.0.0.1:5353', '::1', '[2001:db8::53]:53']);
  assert.equal(config.domains.customDomainCheckIntervalSeconds, 30);
  const defaults = loadConfig({});
  assert.deepEqual(
    [
      defaults.domains.dnsServers,
      defaults.domains.dnsTimeoutMs,
      defaults.domains.customDomainCheckIntervalSeconds,
      defaults.domains.customDomainPendingSeconds,
      defaults.domains.customDomainRefreshSeconds,
    ],
    [null, 5000, 60, 604_800, 5],
  );
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
    [{ SANDBOXD_PLANS: '{"x":{"executionsPerMinute":1,"maxConcurrentVms":1,"maxTotalVcpus":1,"diskMb":512}}' }, /SANDBOXD_PLANS/],
    [{ SANDBOXD_HOST_CPU_RESERVE: '.5' }, /SANDBOXD_HOST_CPU_RESERVE/],
    [{ SANDBOXD_HOST_CPU_RESERVE: '-1' }, /SANDBOXD_HOST_CPU_RESERVE/],
    [{ SANDBOXD_VM_CPU_WEIGHT: '0' }, /SANDBOXD_VM_CPU_WEIGHT/],
    [{ SANDBOXD_MIN_FREE_DISK_MB: 'lots' }, /SANDBOXD_MIN_FREE_DISK_MB/],
    [{ SANDBOXD_DNS_SERVERS: 'dns.google' }, /SANDBOXD_DNS_SERVERS: .*a name cannot be a resolver/],
    [{ SANDBOXD_DNS_SERVERS: '127.0.0.1:70000' }, /SANDBOXD_DNS_SERVERS/],
    [{ SANDBOXD_DNS_SERVERS: '1.1.1.1,' }, /SANDBOXD_DNS_SERVERS/],
    [{ SANDBOXD_CUSTOM_DOMAIN_PENDING_SECONDS: '10' }, /SANDBOXD_CUSTOM_DOMAIN_PENDING_SECONDS/],
    [{ SANDBOXD_VAULT_KEY: 'too short' }, /SANDBOXD_VAULT_KEY/],
    [{ SANDBOXD_VAULT_UPSTREAM_CA_FILE: '/nonexistent/ca.pem' }, /SANDBOXD_VAULT_UPSTREAM_CA_FILE: ENOENT/],
    [{ SANDBOXD_VAULT_UPSTREAM_CA_FILE: fileURLToPath(import.meta.url) }, /SANDBOXD_VAULT_UPSTREAM_CA_FILE: .* has no PEM certificate/],
  ];
  for (const [env, pattern] of cases)
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
    );
});
