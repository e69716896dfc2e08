/** The template pull's guard rules and registry pinning, as text and decisions (no nft, no skopeo). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pullGuardRuleset, PULL_GUARD_TABLE } from '../../src/image/oci/pull-guard.ts';
import { parseImageReference } from '../../src/image/oci/reference.ts';
import { checkRegistry, hostsFileText } from '../../src/image/oci/registry-access.ts';
import { OciImageError } from '../../src/image/oci/errors.ts';

test('the pull guard jumps on the pull user only, lets the allowed sets and DNS through, and refuses the host and private ranges', () => {
  const rules = pullGuardRuleset({
    uid: 999,
    dnsServers: ['10.0.0.53', 'fd00::53'],
    blockedIpv4: ['127.0.0.0/8', '10.0.0.0/8'],
    blockedIpv6: ['::1/128'],
  }).split('\n');
  const t = `inet ${PULL_GUARD_TABLE}`;
  // Never a `delete table`: the sets' elements of pulls in flight survive a reinstall.
  assert.ok(!rules.some((line) => line.startsWith('delete')));
  assert.ok(rules.includes(`flush chain ${t} pull_egress`));
  const egress = rules.filter((line) => line.startsWith(`add rule ${t} pull_egress`)).map((line) => line.slice(`add rule ${t} pull_egress `.length));
  assert.deepEqual(egress, [
    'ip daddr . tcp dport @allowed4 accept',
    'ip6 daddr . tcp dport @allowed6 accept',
    'ip daddr { 10.0.0.53 } meta l4proto { tcp, udp } th dport 53 accept',
    'ip6 daddr { fd00::53 } meta l4proto { tcp, udp } th dport 53 accept',
    'oifname "lo" jump deny',
    'ip daddr { 127.0.0.0/8, 10.0.0.0/8 } jump deny',
    'ip6 daddr { ::1/128 } jump deny',
  ]);
  assert.ok(rules.includes(`add rule ${t} output meta skuid 999 jump pull_egress`));
  assert.throws(() => pullGuardRuleset({ uid: 0, dnsServers: [], blockedIpv4: [], blockedIpv6: [] }), /unprivileged uid/);
  assert.throws(() => pullGuardRuleset({ uid: 999, dnsServers: ['1.2.3.4; flush ruleset'], blockedIpv4: [], blockedIpv6: [] }), /not an address/);
});

test('a registry is pinned by the name skopeo dials, on its ports; only trusted ones may be private', async () => {
  const dns = (answers: Readonly<Record<string, readonly string[]>>) => async (host: string) => [...(answers[host] ?? [])];
  const hub = await checkRegistry(parseImageReference('alpine'), { resolveHost: dns({ 'registry-1.docker.io': ['198.51.100.1'] }) });
  assert.deepEqual(hub, { host: 'registry-1.docker.io', addresses: ['198.51.100.1'], ports: [443], trusted: false });
  assert.equal(
    hostsFileText(hub)
      .split('\n')
      .filter((line) => !line.startsWith('#'))
      .join('\n'),
    '198.51.100.1\tregistry-1.docker.io\n',
  );

  const insecure = await checkRegistry(parseImageReference('reg.internal/team/app'), {
    insecureRegistries: ['reg.internal'],
    resolveHost: dns({ 'reg.internal': ['10.1.1.1'] }),
  });
  assert.deepEqual(insecure, { host: 'reg.internal', addresses: ['10.1.1.1'], ports: [443, 80], trusted: true });
  const literal = await checkRegistry(parseImageReference('127.0.0.1:5000/x'), { allowPrivateRegistries: true });
  assert.deepEqual(literal, { host: '127.0.0.1', addresses: ['127.0.0.1'], ports: [5000], trusted: true });
  assert.equal(
    hostsFileText(literal)
      .split('\n')
      .filter((line) => line && !line.startsWith('#')).length,
    0,
    'an address needs no pin',
  );

  for (const [reference, answers] of [
    ['reg.example.com/x', { 'reg.example.com': ['198.51.100.2', '10.0.0.9'] }],
    ['127.0.0.1:5000/x', {}],
  ] as const) {
    const error = await checkRegistry(parseImageReference(reference), { resolveHost: dns(answers) }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof OciImageError && error.code === 'OCI_REGISTRY_FORBIDDEN', String(error));
  }
  const missing = await checkRegistry(parseImageReference('nowhere.example.com/x'), { resolveHost: dns({}) }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  assert.ok(missing instanceof OciImageError && missing.code === 'OCI_REGISTRY_UNREACHABLE', String(missing));
});
