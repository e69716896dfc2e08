// test-lane: heavy (installs the VM network guard in the host's real nftables, which the VMs of other files rely on).
/**
 * The network guard's rules and status on the real nftables of this host. Whether a guest is really kept
 * off the host is proven end to end in qemu-driver.test.ts.
 */
import { strict as assert } from 'node:assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_BLOCKED_IPV4, guardRuleset, hostDnsServers, installNetworkGuard, networkGuardStatus } from '../../src/vm/qemu/network-guard.ts';
import { ensureVmUser } from '../../src/vm/qemu/vm-user.ts';

const isRoot = process.getuid?.() === 0;

describe('network guard', () => {
  test('the ruleset replaces its own table atomically, allows DNS first and rejects the host and private ranges', () => {
    const text = guardRuleset({ uid: 999, dnsServers: ['10.255.255.53'], blockedIpv4: DEFAULT_BLOCKED_IPV4, blockedIpv6: ['::1/128'] });
    const lines = text.split('\n').map((line) => line.trim());
    assert.deepEqual(lines.slice(0, 3), ['table inet sandboxd_guard', 'delete table inet sandboxd_guard', 'table inet sandboxd_guard {']);
    const dns = lines.findIndex((line) => line.includes('th dport 53 accept'));
    const lo = lines.indexOf('oifname "lo" jump deny');
    assert.ok(dns > 0 && lo > dns, 'DNS to the resolver is accepted before anything is rejected');
    assert.ok(lines.includes('meta skuid 999 jump vm_egress'));
    assert.ok(lines.some((line) => line.startsWith('ip daddr {') && line.includes('169.254.0.0/16') && line.endsWith('jump deny')));
  });

  test('the ruleset refuses anything that is not an address (no injection into nft input)', () => {
    assert.throws(() => guardRuleset({ uid: 999, dnsServers: ['1.1.1.1 } accept; #'], blockedIpv4: [], blockedIpv6: [] }), /not an address/);
    assert.throws(() => guardRuleset({ uid: 0, dnsServers: [], blockedIpv4: [], blockedIpv6: [] }), /unprivileged uid/);
  });

  test('the resolvers come from resolv.conf', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandboxd-resolv-'));
    try {
      await writeFile(join(dir, 'resolv.conf'), '# comment\nnameserver 10.255.255.53\nnameserver fe80::1%eth0\nsearch example\nnameserver bogus\n');
      assert.deepEqual(await hostDnsServers(join(dir, 'resolv.conf')), ['10.255.255.53', 'fe80::1']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('installing is idempotent and the status reports it active', { skip: !isRoot && 'needs root' }, async () => {
    const user = await ensureVmUser();
    const first = await installNetworkGuard({ uid: user.uid });
    const second = await installNetworkGuard({ uid: user.uid });
    assert.equal(first.active, true, first.detail);
    assert.equal(second.active, true, second.detail);
    assert.equal((await networkGuardStatus(user.uid)).active, true);
    assert.equal((await networkGuardStatus(user.uid + 1)).active, false);
  });
});
