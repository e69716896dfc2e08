// test-lane: light
/**
 * The pure pieces of private networks: how the relay finds a redirected connection's original destination in the
 * kernel's connection tracking table, the firewall script it installs, and the hosts block written into members.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOSTS_BEGIN, HOSTS_END, hostLabel, memberHostnames, withHostsBlock } from '../../src/core/networks.ts';
import { findOriginalDestination } from '../../src/net/private-network/original-destination.ts';
import { relayTableScript } from '../../src/net/private-network/ruleset.ts';

const TABLE = [
  'ipv4     2 tcp      6 431948 ESTABLISHED src=127.0.0.1 dst=127.0.0.1 sport=41716 dport=44363 src=127.0.0.1 dst=127.0.0.1 sport=44363 dport=41716 [ASSURED] mark=0 zone=0 use=2',
  'ipv4     2 tcp      6 119 SYN_SENT src=192.0.2.2 dst=10.250.0.3 sport=50000 dport=8000 [UNREPLIED] src=127.0.0.1 dst=192.0.2.2 sport=40001 dport=50000 mark=6017257 zone=0 use=2',
  'ipv4     2 tcp      6 431999 ESTABLISHED src=192.0.2.2 dst=10.250.0.2 sport=50000 dport=5432 src=127.0.0.1 dst=192.0.2.2 sport=40000 dport=50000 [ASSURED] mark=6017257 zone=0 use=2',
  'ipv4     2 udp      17 29 src=192.0.2.2 dst=10.250.0.9 sport=50000 dport=53 src=127.0.0.1 dst=192.0.2.2 sport=40000 dport=50000 mark=0 zone=0 use=2',
].join('\n');

test('the original destination is the entry whose reply comes from the listener to the peer', () => {
  assert.deepEqual(findOriginalDestination(TABLE, { address: '192.0.2.2', port: 50000 }, 40000), { address: '10.250.0.2', port: 5432 });
  assert.deepEqual(findOriginalDestination(TABLE, { address: '192.0.2.2', port: 50000 }, 40001), { address: '10.250.0.3', port: 8000 });
  assert.equal(findOriginalDestination(TABLE, { address: '192.0.2.2', port: 50001 }, 40000), null, 'another peer port');
  assert.equal(findOriginalDestination(TABLE, { address: '192.0.2.9', port: 50000 }, 40000), null, 'another peer address');
  assert.equal(findOriginalDestination(TABLE, { address: '192.0.2.2', port: 50000 }, 40002), null, "another VM's listener");
});

test('the firewall script redirects only TCP to the networks of each member, before the egress table', () => {
  const script = relayTableScript('sandboxd_pnet_abcd1234', [
    { cgroupPath: 'unified/sandboxd/vm-a', level: 2, cidrs: ['10.250.0.0/24'], port: 40000 },
    { cgroupPath: 'unified/sandboxd/vm-b', level: 2, cidrs: [], port: 40001 },
  ]);
  assert.match(script, /priority -110/);
  assert.match(
    script,
    /socket cgroupv2 level 2 "unified\/sandboxd\/vm-a" ip daddr \{ 10\.250\.0\.0\/24 \} meta l4proto tcp ct mark set \d+ redirect to :40000/,
  );
  assert.doesNotMatch(script, /vm-b/, 'a VM without networks has no rule');
  assert.throws(() => relayTableScript('t', [{ cgroupPath: 'a/../b', level: 1, cidrs: [], port: 1 }]));
  assert.throws(() => relayTableScript('t', [{ cgroupPath: 'a', level: 1, cidrs: ['192.168.0.0/24'], port: 1 }]), /CIDR/);
});

test('the hosts block is replaced in place and removed when empty; names are DNS labels', () => {
  const base = '127.0.0.1 localhost\n::1 localhost\n';
  const once = withHostsBlock(base, ['10.250.0.2 web.lan.internal']);
  assert.equal(once, `${base}${HOSTS_BEGIN}\n10.250.0.2 web.lan.internal\n${HOSTS_END}\n`);
  const twice = withHostsBlock(`${once}10.0.0.1 mine\n`, ['10.250.0.3 db.lan.internal']);
  assert.equal(twice, `${base}10.0.0.1 mine\n${HOSTS_BEGIN}\n10.250.0.3 db.lan.internal\n${HOSTS_END}\n`);
  assert.equal(withHostsBlock(twice, []), `${base}10.0.0.1 mine\n`);
  assert.equal(hostLabel('My Web_Server!'), 'my-web-server');
  assert.equal(hostLabel('***'), null);
  assert.deepEqual(memberHostnames({ vmId: 'vm-abc', vmName: 'Web' }, { name: 'lan' }), ['web.lan.internal', 'vm-abc.lan.internal']);
  assert.deepEqual(memberHostnames({ vmId: 'vm-abc', vmName: null }, { name: 'lan' }), ['vm-abc.lan.internal']);
});
