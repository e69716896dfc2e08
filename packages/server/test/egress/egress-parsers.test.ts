/**
 * The pieces of egress enforcement that read untrusted bytes or text: the TLS ClientHello parser (against real
 * ClientHellos that Node's TLS client sends), the HTTP Host reader, the nft trace parser, and the policy's
 * validation and name matching.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { describe, test } from 'node:test';
import { allowsAddress, allowsName, isOpenEgressPolicy, normalizeEgressPolicy, OPEN_EGRESS_POLICY, type EgressPolicy } from '../../src/core/egress-policy.ts';
import { httpHostOf } from '../../src/net/egress/egress-proxy.ts';
import { parseClientHello } from '../../src/net/egress/tls-client-hello.ts';
import { TraceParser } from '../../src/net/egress/trace-monitor.ts';

/** The first bytes a TLS client sends for `servername` (captured by a plain TCP server). */
async function clientHello(servername: string | undefined): Promise<Buffer> {
  let received = Buffer.alloc(0);
  const server = net.createServer((socket) => {
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (parseClientHello(received).kind !== 'incomplete') socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => {
    const client = tls.connect({ host: '127.0.0.1', port, ...(servername ? { servername } : {}), rejectUnauthorized: false });
    client.on('error', () => resolve());
    client.on('close', () => resolve());
  });
  server.close();
  return received;
}

describe('TLS ClientHello', () => {
  test('the SNI of a real ClientHello, also when it arrives a byte at a time', async () => {
    const hello = await clientHello('a.test');
    assert.deepEqual(parseClientHello(hello), { kind: 'hello', serverName: 'a.test' });
    for (let length = 0; length < hello.length; length += 7) assert.equal(parseClientHello(hello.subarray(0, length)).kind, 'incomplete', `${length} bytes`);
  });

  test('no SNI (a connection to an address) is a hello without a name', async () => {
    assert.deepEqual(parseClientHello(await clientHello(undefined)), { kind: 'hello', serverName: null });
  });

  test('plain HTTP, garbage and a forged length are invalid, never a name', async () => {
    assert.equal(parseClientHello(Buffer.from('GET / HTTP/1.1\r\nHost: a.test\r\n\r\n')).kind, 'invalid');
    const hello = await clientHello('a.test');
    const forged = Buffer.from(hello);
    forged.writeUInt16BE(0xffff, 3); // a record longer than what arrives, but under the cap: still incomplete
    assert.equal(parseClientHello(forged).kind, 'incomplete');
    const truncated = Buffer.from(hello);
    truncated[5] = 2; // not a ClientHello
    assert.equal(parseClientHello(truncated).kind, 'invalid');
  });
});

describe('HTTP Host', () => {
  test('the Host of the first request head', () => {
    assert.equal(httpHostOf(Buffer.from('GET / HTTP/1.1\r\nUser-Agent: x\r\nHOST:  A.Test:80 \r\n\r\n')), 'a.test:80');
    assert.equal(httpHostOf(Buffer.from('GET / HTTP/1.1\r\nHost: a.test\r\n')), undefined, 'incomplete');
    assert.equal(httpHostOf(Buffer.from('GET / HTTP/1.0\r\n\r\n')), null, 'no Host');
  });
});

describe('nft trace lines', () => {
  const parser = new TraceParser('sandboxd_egress_12345678');
  test('a packet and its verdict make one attempt; other tables and unknown packets are ignored', () => {
    assert.equal(parser.push('trace id 1a inet sandboxd_egress_12345678 f_vm_1 packet: oif "eth0" ip saddr 10.1.1.1 ip daddr 203.0.113.9 ip protocol tcp tcp sport 4000 tcp dport 22 tcp flags == syn'), null);
    assert.deepEqual(parser.push('trace id 1a inet sandboxd_egress_12345678 f_vm_1 rule meta l4proto tcp meta nftrace set 1 reject with tcp reset (verdict drop)'), {
      key: 'vm_1',
      protocol: 'tcp',
      address: '203.0.113.9',
      port: 22,
      verdict: 'refused',
    });
    parser.push('trace id 2b inet sandboxd_egress_12345678 f_vm_1 packet: oif "eth0" ip saddr 10.1.1.1 ip daddr 203.0.113.10 ip protocol udp udp sport 4000 udp dport 123');
    assert.deepEqual(parser.push('trace id 2b inet sandboxd_egress_12345678 f_vm_1 unknown rule handle 44 (verdict accept)'), { key: 'vm_1', protocol: 'udp', address: '203.0.113.10', port: 123, verdict: 'allowed' });
    assert.equal(parser.push('trace id 3c inet sandboxd_guard vm_egress packet: ip daddr 1.1.1.1 ip protocol tcp tcp dport 80'), null);
    assert.equal(parser.push('trace id 3c inet sandboxd_guard vm_egress rule counter (verdict drop)'), null);
  });
});

describe('policies', () => {
  const policy = (overrides: Partial<EgressPolicy>) => normalizeEgressPolicy({ allowPackageManagers: false, allowHttp: true, allowHttps: true, allowedDomains: [], allowedCidrs: [], ...overrides });

  test('names: exact, subdomain wildcards, package managers; case and trailing dots do not matter', () => {
    const p = policy({ allowedDomains: ['A.test.', '*.cdn.test'] });
    assert.deepEqual(p.allowedDomains, ['a.test', '*.cdn.test']);
    assert.ok(allowsName(p, 'a.test') && allowsName(p, 'A.TEST.') && allowsName(p, 'x.cdn.test'));
    assert.ok(!allowsName(p, 'b.test') && !allowsName(p, 'cdn.test') && !allowsName(p, 'x.a.test') && !allowsName(p, 'evilcdn.test'));
    assert.ok(!allowsName(p, 'pypi.org'));
    assert.ok(allowsName(policy({ allowPackageManagers: true }), 'pypi.org') && allowsName(policy({ allowPackageManagers: true }), 'deb.debian.org'));
  });

  test('CIDRs are canonical and matched on the address; bad entries are 400', () => {
    const p = policy({ allowedCidrs: ['203.0.113.77/24', '198.51.100.1'] });
    assert.deepEqual(p.allowedCidrs, ['203.0.113.0/24', '198.51.100.1/32']);
    assert.ok(allowsAddress(p, '203.0.113.200') && !allowsAddress(p, '203.0.114.1') && allowsAddress(p, '198.51.100.1'));
    for (const bad of ['10.0.0.0/33', 'a.b.c.d', '::1/128', '1.2.3.4/', '1.2.3.4/8/8']) assert.throws(() => policy({ allowedCidrs: [bad] }), { code: 'BAD_REQUEST' }, bad);
    for (const bad of ['', 'has space.test', '1.2.3.4', '*.', '**.a.test', 'a..test']) assert.throws(() => policy({ allowedDomains: [bad] }), { code: 'BAD_REQUEST' }, bad);
  });

  test('only the open policy skips enforcement', () => {
    assert.ok(isOpenEgressPolicy(OPEN_EGRESS_POLICY));
    assert.ok(!isOpenEgressPolicy(policy({ allowedDomains: ['*'] })));
    assert.ok(!isOpenEgressPolicy({ ...OPEN_EGRESS_POLICY, allowHttp: false }));
  });
});
