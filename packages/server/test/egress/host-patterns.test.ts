/**
 * The one host-pattern grammar and matcher (`src/contract/host-patterns.ts`) as each of its callers uses it: egress
 * policies (`*` allowed, no addresses), vault secrets (`*` refused), browser credentials (`*` refused, IPv4
 * addresses allowed) and custom domains (the JSON-schema pattern of a fully qualified name). Exact names match only
 * themselves, `*.suffix` only the subdomains, and names compare without case or a trailing dot.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DOMAIN_NAME_PATTERN,
  HOST_PATTERN_PATTERN,
  HostPatternError,
  hostMatchesAny,
  matchesHostPattern,
  normalizeHostPattern,
} from '../../src/contract/host-patterns.ts';
import { allowsName, normalizeDomainPattern, normalizeEgressPolicy } from '../../src/core/egress-policy.ts';
import { AppError } from '../../src/core/errors.ts';
import { normalizeAllowedHosts } from '../../src/core/vault/vault-service.ts';

describe('host patterns', () => {
  test('canonical form: trimmed, lower case, one trailing dot dropped; `*.` is not `*`', () => {
    assert.equal(normalizeHostPattern('  Example.COM. '), 'example.com');
    assert.equal(normalizeHostPattern('*.CDN.test'), '*.cdn.test');
    assert.equal(normalizeHostPattern('_dmarc.a.test'), '_dmarc.a.test');
    assert.equal(normalizeHostPattern('*', { everyHost: true }), '*');
    assert.throws(() => normalizeHostPattern('*.', { everyHost: true }), HostPatternError);
  });

  test('refused: not a name, a port, a scheme, an empty label, a label over 63, a name over 253', () => {
    for (const entry of [
      '',
      ' ',
      'exa mple.com',
      'example.com:443',
      'https://example.com/',
      'a..test',
      '.a.test',
      '-a.test',
      `${'a'.repeat(64)}.test`,
      `${'a.'.repeat(127)}test`,
      '*.*.test',
      '**.test',
    ]) {
      assert.throws(
        () => normalizeHostPattern(entry, { everyHost: true, addresses: true }),
        (error: unknown) => error instanceof HostPatternError && error.reason === 'not-a-name',
        JSON.stringify(entry),
      );
    }
  });

  test('rules per caller: `*` only where every host may be meant, an address only where a page may be on one', () => {
    assert.throws(
      () => normalizeHostPattern('*'),
      (error: unknown) => error instanceof HostPatternError && error.reason === 'every-host',
    );
    assert.throws(
      () => normalizeHostPattern('10.1.2.3'),
      (error: unknown) => error instanceof HostPatternError && error.reason === 'address',
    );
    assert.equal(normalizeHostPattern('198.51.100.7', { addresses: true }), '198.51.100.7');
    assert.throws(
      () => normalizeHostPattern('*.198.51.100.7', { addresses: true }),
      (error: unknown) => error instanceof HostPatternError && error.reason === 'address',
    );
  });

  test('matching: exact names only themselves, `*.suffix` only subdomains, `*` everything; case and the trailing dot do not count', () => {
    assert.equal(matchesHostPattern('a.test', 'a.test'), true);
    assert.equal(matchesHostPattern('www.a.test', 'a.test'), false);
    assert.equal(matchesHostPattern('www.a.test', '*.a.test'), true);
    assert.equal(matchesHostPattern('x.y.a.test', '*.a.test'), true);
    assert.equal(matchesHostPattern('a.test', '*.a.test'), false);
    assert.equal(matchesHostPattern('evila.test', '*.a.test'), false);
    assert.equal(matchesHostPattern('anything.example', '*'), true);
    assert.equal(hostMatchesAny(['a.test'], 'A.Test.'), true);
    assert.equal(hostMatchesAny(['a.test'], ' a.test'), false, 'a name is not trimmed: what a guest sends is matched as it is');
    assert.equal(hostMatchesAny(['*'], ''), false);
  });

  test('egress keeps its rules and its 400: `*` allowed, addresses refused (allowed_cidrs), and allowsName matches through the same matcher', () => {
    assert.equal(normalizeDomainPattern('*'), '*');
    assert.throws(
      () => normalizeDomainPattern('10.0.0.1'),
      (error: unknown) => error instanceof AppError && error.code === 'BAD_REQUEST' && /use allowed_cidrs/.test(error.message),
    );
    const policy = normalizeEgressPolicy({
      allowPackageManagers: false,
      allowHttp: true,
      allowHttps: true,
      allowedDomains: ['A.test.', '*.cdn.test'],
      allowedCidrs: [],
    });
    assert.deepEqual(policy.allowedDomains, ['a.test', '*.cdn.test']);
    assert.equal(allowsName(policy, 'a.test.'), true);
    assert.equal(allowsName(policy, 'img.CDN.test'), true);
    assert.equal(allowsName(policy, 'cdn.test'), false);
    assert.equal(allowsName(policy, 'b.test'), false);
  });

  test('vault secrets keep their rules and their 400s: `*` refused with its own message, duplicates merged', () => {
    assert.deepEqual(normalizeAllowedHosts(['API.example.com', 'api.example.com.', '*.example.org']), ['api.example.com', '*.example.org']);
    assert.throws(
      () => normalizeAllowedHosts(['*']),
      (error: unknown) => error instanceof AppError && /would send the secret to every host/.test(error.message),
    );
    assert.throws(
      () => normalizeAllowedHosts(['not a host']),
      (error: unknown) => error instanceof AppError && /is not a host name or "\*\.domain"/.test(error.message),
    );
  });

  test('the JSON-schema patterns: credentials take names, addresses and `*.name` without a port; custom domains a name of two labels or more', () => {
    const hostPattern = new RegExp(HOST_PATTERN_PATTERN);
    for (const ok of ['example.com', '*.example.com', '198.51.100.7', 'localhost', 'Example.COM']) assert.ok(hostPattern.test(ok), ok);
    for (const bad of ['example.com:8080', 'https://example.com/', '*', '*.', 'exa mple.com', 'a..b', `${'a'.repeat(64)}.com`])
      assert.ok(!hostPattern.test(bad), bad);
    const domainName = new RegExp(DOMAIN_NAME_PATTERN);
    for (const ok of ['app.example.com', 'app.example.com.', 'xn--bcher-kva.example']) assert.ok(domainName.test(ok), ok);
    for (const bad of ['localhost', '*.example.com', 'app_1.example.com', '-app.example.com']) assert.ok(!domainName.test(bad), bad);
  });
});
